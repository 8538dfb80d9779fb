package target

import (
	"context"
	"strings"
	"testing"

	"redline/internal/redisadmin"
	"redline/internal/serverhost"
)

// attachHost records the nodes a session attached (and so sent the
// password to).
type attachHost struct {
	serverhost.Host
	attached []string
}

func (h *attachHost) RedisAttach(_ context.Context, r serverhost.RedisTarget) (serverhost.RedisAttached, error) {
	h.attached = append(h.attached, r.Addr)
	return serverhost.RedisAttached{}, context.Canceled
}

// Issue 35, item 5: autotune --cluster --addr sent the password to every
// address CLUSTER SHARDS reported. A node neither on the seed's host nor
// in its network is refused before anything is sent to it, with the flag
// that allows it; the decision is the doctor's (redisadmin.NodeGetsPassword).
func TestAutotuneClusterPasswordStaysNearTheSeed(t *testing.T) {
	h := &attachHost{}
	tg := &Target{host: h}
	c := &clusterNodes{admins: map[string]*redisadmin.Conn{}}
	seed := &serverhost.RedisTarget{Addr: "127.0.0.1:7000", Password: "pw"}
	_, err := c.attach(context.Background(), tg, "192.0.2.1:6379", seed)
	if err == nil || !strings.Contains(err.Error(), "not sent the password") || !strings.Contains(err.Error(), "--cluster-auth-any") {
		t.Errorf("attach = %v; want the node refused the password", err)
	}
	if len(h.attached) != 0 {
		t.Errorf("the password went to %v", h.attached)
	}
}

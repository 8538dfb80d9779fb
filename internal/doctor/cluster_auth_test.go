package doctor

import (
	"context"
	"strings"
	"testing"
	"time"

	"redline/internal/redisadmin"
	"redline/internal/testutil/respscript"
)

// Issue 35, item 5: the doctor sent the seed's password to every address
// CLUSTER SHARDS listed. A node neither on the seed's host nor in its
// network is not dialled with it (192.0.2.1, TEST-NET-1, is not dialled
// at all); a node beside the seed is read with it.
func TestClusterNodesGetThePasswordOnlyNearTheSeed(t *testing.T) {
	s := respscript.Start(t, respscript.Options{Password: "pw"})
	near := &ClusterNodeFacts{Node: Node{Addr: s.Addr(), Role: "primary"}}
	far := &ClusterNodeFacts{Node: Node{Addr: "192.0.2.1:6379", Role: "primary"}}
	o := GatherOptions{Redis: &redisadmin.Options{Addr: "127.0.0.1:6379", Password: "pw", Timeout: 2 * time.Second}}
	readNodes(context.Background(), []*ClusterNodeFacts{near, far}, o, "")
	if near.Error != "" {
		t.Errorf("the node beside the seed: %s", near.Error)
	}
	if !strings.Contains(far.Error, "not sent the password") || !strings.Contains(far.Error, "--cluster-auth-any") {
		t.Errorf("a node elsewhere: %q; want it refused the password", far.Error)
	}
	o.ClusterAuthAny = true
	far.Error = ""
	readNode(context.Background(), far, o, "")
	if strings.Contains(far.Error, "not sent the password") {
		t.Errorf("--cluster-auth-any: %q", far.Error)
	}
}

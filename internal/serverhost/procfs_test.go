package serverhost_test

import (
	"io/fs"
	"testing"
	"testing/fstest"
	"time"

	"redline/internal/serverhost"
)

// TestSampleProcFS: a sample's files are an fs.FS rooted at /proc that
// passes the standard library's file system checks, with the directories
// the thread files imply.
func TestSampleProcFS(t *testing.T) {
	smp := serverhost.Sample{Time: time.Unix(1700000000, 0), Files: map[string]string{
		"/proc/stat":                   "cpu  1 2 3 4 5 6 7 8 0 0\n",
		"/proc/softirqs":               "                    CPU0\n NET_RX: 5\n",
		"/proc/net/softnet_stat":       "00000001 00000000 00000000\n",
		"/proc/412/stat":               "412 (redis-server) S 1",
		"/proc/412/task/412/stat":      "412 (redis-server) S 1",
		"/proc/412/task/412/schedstat": "1 2 3\n",
		"/proc/412/task/415/stat":      "415 (io_thd_1) S 1",
		"/etc/passwd":                  "not under /proc: left out",
		"/proc/../etc/shadow":          "not a valid path: left out",
	}}
	fsys := smp.ProcFS()
	if err := fstest.TestFS(fsys, "stat", "softirqs", "net/softnet_stat", "412/stat", "412/task/412/schedstat", "412/task/415/stat"); err != nil {
		t.Fatal(err)
	}
	tasks, err := fs.ReadDir(fsys, "412/task")
	if err != nil || len(tasks) != 2 || tasks[0].Name() != "412" || !tasks[1].IsDir() {
		t.Fatalf("412/task: %v, %v", tasks, err)
	}
	for _, bad := range []string{"../etc/shadow", "etc/passwd", "412/task/999/stat"} {
		if _, err := fs.ReadFile(fsys, bad); err == nil {
			t.Errorf("%s: read, want an error", bad)
		}
	}
}

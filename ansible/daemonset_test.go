package ansible_test

import (
	"os"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestDaemonSetOnPaper checks the structure of the Kubernetes example no
// cluster here can run (no API server for kubectl's validation, and no
// Kubernetes schema offline): the fields it relies on, and that every
// volume a container mounts is declared and the selector selects the pods.
func TestDaemonSetOnPaper(t *testing.T) {
	b, err := os.ReadFile("../examples/kubernetes/redline-daemonset.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type mount struct{ Name, MountPath string }
	var ds struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string
		Spec       struct {
			Selector struct {
				MatchLabels map[string]string `yaml:"matchLabels"`
			}
			Template struct {
				Metadata struct{ Labels map[string]string }
				Spec     struct {
					HostNetwork bool `yaml:"hostNetwork"`
					HostPID     bool `yaml:"hostPID"`
					Containers  []struct {
						Name            string
						Image           string
						SecurityContext struct{ Privileged bool } `yaml:"securityContext"`
						VolumeMounts    []mount                   `yaml:"volumeMounts"`
					}
					Volumes []struct{ Name string }
				}
			}
		}
	}
	if err := yaml.Unmarshal(b, &ds); err != nil {
		t.Fatal(err)
	}
	spec := ds.Spec.Template.Spec
	if ds.APIVersion != "apps/v1" || ds.Kind != "DaemonSet" || !spec.HostNetwork || !spec.HostPID || len(spec.Containers) != 2 {
		t.Fatalf("not a host-network, host-PID DaemonSet of two containers: %+v", ds)
	}
	for k, v := range ds.Spec.Selector.MatchLabels {
		if ds.Spec.Template.Metadata.Labels[k] != v {
			t.Errorf("the selector's %s=%s is not on the pods", k, v)
		}
	}
	volumes := map[string]bool{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = true
	}
	for _, c := range spec.Containers {
		if !c.SecurityContext.Privileged || c.Image == "" {
			t.Errorf("container %s: privileged %v, image %q", c.Name, c.SecurityContext.Privileged, c.Image)
		}
		for _, m := range c.VolumeMounts {
			if !volumes[m.Name] {
				t.Errorf("container %s mounts %s, which is not a volume", c.Name, m.Name)
			}
		}
	}
}

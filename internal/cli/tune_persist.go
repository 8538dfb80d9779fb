package cli

import (
	"github.com/spf13/cobra"
)

func newTunePersistCmd(s *streams) *cobra.Command {
	o := &tuneApplyOptions{persist: true}
	cmd := &cobra.Command{
		Use:   "persist PLAN --yes",
		Short: "Make a plan survive a reboot: a sysctl.d drop-in, CONFIG REWRITE, a boot unit; rollback removes them",
		Long: `persist applies the plan (values already in place stay as they are) together
with the files that bring it back after a reboot, in one journal session:

  sysctls           /etc/sysctl.d/90-redline.conf (loaded by systemd-sysctl at boot)
  Redis settings    CONFIG REWRITE of the server's config file (after the apply,
                    and again after its rollback; it needs the plan's redis.addr)
  IRQ affinity, RPS/XPS, THP, governors, cpuidle, NIC channels
                    /etc/redline/boot-plan.yaml, applied at boot by
                    /etc/systemd/system/redline-boot.service
                    (redline tune apply --boot), enabled by its link in
                    multi-user.target.wants

Thread affinities and service states do not persist this way; they are named.
Every file is a journaled change: tune rollback removes it (or puts back what
was there), and tune verify says what would come back after a reboot.
--root writes the files below a rehearsal tree instead of /.
Same as tune apply --persist.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTuneApply(cmd.Context(), s, o, args[0])
		},
	}
	o.applyFlags(cmd)
	return cmd
}

package hostgen

import "fmt"

// The captures' /proc/interrupts lines are copied as the captures show
// them (complete lines only); the SOURCE file of each tree cites the
// capture and says what is modelled.

// ENACapture: an EC2 instance's ENA NIC on a 6.x kernel (PCI-MSIX-BUS
// chip column), whose queue vectors 2-4 had no action name at the time.
func ENACapture() *Capture {
	return &Capture{
		NCPU: 4,
		Interrupts: []string{
			" 65:       8362          0          0          2  PCI-MSIX-0000:27:00.0   0-edge      ena-mgmnt@pci:0000:27:00.0",
			" 66:        261          0          0          0  PCI-MSIX-0000:27:00.0   1-edge      enp39s0-Tx-Rx-0",
			" 67:          0        163          0          1  PCI-MSIX-0000:27:00.0   2-edge    ",
			" 68:          1          0        159          0  PCI-MSIX-0000:27:00.0   3-edge    ",
			" 69:          0          0          0        134  PCI-MSIX-0000:27:00.0   4-edge    ",
			"NMI:          0          0          0          0   Non-maskable interrupts",
			"LOC:    1544473         58         62    1131674   Local timer interrupts",
			"SPU:          0          0          0          0   Spurious interrupts",
			"PMI:          0          0          0          0   Performance monitoring interrupts",
			"IWI:          0         83        110          0   IRQ work interrupts",
			"RTR:          0          0          0          0   APIC ICR read retries",
			"RES:          3          4          3          3   Rescheduling interrupts",
			"CAL:       5408        919       1481   13832208   Function call interrupts",
		},
		NICs: []CaptureNIC{{Name: "enp39s0", Driver: "ena", DriverBus: "pci",
			Device: "/sys/devices/pci0000:00/0000:27:00.0", RxQ: 4, TxQ: 4}},
	}
}

// IceCapture: an E810 (ice) port lan1 on a pre-6.2 kernel (IR-PCI-MSI
// with the requester ID in the hwirq), its misc vector, and the other
// port's control (flow director) vector.
func IceCapture() *Capture {
	return &Capture{
		NCPU: 16,
		Interrupts: []string{
			"  66:          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0  IR-PCI-MSI 52953105-edge      ice-0000:65:00.0:ctrl-TxRx-0",
			"  77:          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0  IR-PCI-MSI 52955136-edge      ice-0000:65:00.1:misc",
			"  78:       1670          0          0          0          0          0          0          0          0          0          0          0          0          0          0          0  IR-PCI-MSI 52955137-edge      ice-lan1-TxRx-0",
			"  79:          0        609          0          0          0          0          0          0          0          0          0          0          0          0          0          0  IR-PCI-MSI 52955138-edge      ice-lan1-TxRx-1",
			"  80:          0          0        827          0          0          0          0          0          0          0          0          0          0          0          0          0  IR-PCI-MSI 52955139-edge      ice-lan1-TxRx-2",
		},
		NICs: []CaptureNIC{{Name: "lan1", Driver: "ice", DriverBus: "pci",
			Device: "/sys/devices/pci0000:64/0000:64:00.0/0000:65:00.1", RxQ: 3, TxQ: 3}},
	}
}

// I40ECapture: an X710 VF-less PCIe NIC (i40e) passed through to a
// 4-vCPU guest on PCI segment 1, beside virtio devices.
func I40ECapture() *Capture {
	return &Capture{
		NCPU: 4,
		Interrupts: []string{
			"  1:          0          0          0          0   IO-APIC  17-fasteoi   ACPI:Ged",
			"  2:          0          0          0          0   IO-APIC  19-fasteoi   ACPI:Ged",
			"  3:          0          0          0          0   IO-APIC  18-fasteoi   ACPI:Ged",
			"  4:          0          0          0          0   IO-APIC  16-fasteoi   ACPI:Ged",
			"  5:          0          0          0          0   PCI-MSI 134217728-edge      virtio0-config",
			"  6:          0        752          0          0   PCI-MSI 134217729-edge      virtio0-virtqueues",
			"  7:          0          0          0          0   PCI-MSI 16384-edge      virtio1-config",
			"  8:       1014          0          0          0   PCI-MSI 16385-edge      virtio1-req.0",
			"  9:          0          0          0          2   PCI-MSI 134463488-edge      i40e-0001:00:0f.0:misc",
			" 10:        119          0          0          0   PCI-MSI 134463489-edge      i40e-enP1s15-TxRx-0",
			" 11:          0          0          0          0   PCI-MSI 134463490-edge      i40e-enP1s15-TxRx-1",
			" 12:          0          0          0          0   PCI-MSI 134463491-edge      i40e-enP1s15-TxRx-2",
		},
		NICs: []CaptureNIC{{Name: "enP1s15", Driver: "i40e", DriverBus: "pci",
			Device: "/sys/devices/pci0001:00/0001:00:0f.0", RxQ: 3, TxQ: 3}},
	}
}

// GVECapture: a Google Compute Engine gVNIC (gve 1.4+) on 2 vCPUs.
func GVECapture() *Capture {
	return &Capture{
		NCPU: 2,
		Interrupts: []string{
			" 24:         65          0   PCI-MSI 65536-edge      gve-ntfy-blk0@pci:0000:00:04.0",
			" 25:         71          1   PCI-MSI 65537-edge      gve-ntfy-blk1@pci:0000:00:04.0",
			" 26:          0          0   PCI-MSI 65538-edge      gve-mgmnt@pci:0000:00:04.0",
		},
		NICs: []CaptureNIC{{Name: "ens4", Driver: "gve", DriverBus: "pci",
			Device: "/sys/devices/pci0000:00/0000:00:04.0", RxQ: 1, TxQ: 1}},
	}
}

// VirtioHotplugCapture: a 16-vCPU Kata guest's multi-queue virtio NIC
// (virtio5); the tree has no driver link, so only the device path says
// virtio.
func VirtioHotplugCapture() *Capture {
	return &Capture{
		NCPU: 16,
		Interrupts: []string{
			" 41:          0        328          0          0          0          0          0          0          0          0          0          0          0          0          0          0  IR-PCI-MSI 163843-edge      virtio5-input.1",
			" 42:          0          1          0          0          0          0          0          0          0          0          0          0          0          0          0          0  IR-PCI-MSI 163844-edge      virtio5-output.1",
			" 43:          0          0        200          0          0          0          0          0          0          0          0          0          0          0          0          0  IR-PCI-MSI 163845-edge      virtio5-input.2",
			" 44:          0          0          1          0          0          0          0          0          0          0          0          0          0          0          0          0  IR-PCI-MSI 163846-edge      virtio5-output.2",
			" 45:          0          0          0       4432          0          0          0          0          0          0          0          0          0          0          0          0  IR-PCI-MSI 163847-edge      virtio5-input.3",
		},
		NICs: []CaptureNIC{{Name: "eth0", Device: "/sys/devices/pci0000:00/0000:00:0a.0/virtio5", RxQ: 4, TxQ: 4}},
	}
}

// R8125Capture: a Realtek RTL8125 (out-of-tree r8125 driver, RSS build)
// on OpenWrt, vectors named IF-N, with 3 rx and 2 tx queues.
func R8125Capture() *Capture {
	return &Capture{
		NCPU: 3,
		Interrupts: []string{
			" 30: 3551364829          0          1   PCI-MSI 262144-edge      eth0-0",
			" 31:          0          0          0   PCI-MSI 262145-edge      eth0-1",
			" 32:          0          0          0   PCI-MSI 262146-edge      eth0-2",
			" 33:          0          0          0   PCI-MSI 262147-edge      eth0-3",
			" 34:          0          0          0   PCI-MSI 262148-edge      eth0-4",
			" 35:          0          0          0   PCI-MSI 262149-edge      eth0-5",
			" 36:          0          0          0   PCI-MSI 262150-edge      eth0-6",
		},
		NICs: []CaptureNIC{{Name: "eth0", Driver: "r8125", DriverBus: "pci",
			Device: "/sys/devices/pci0000:00/0000:00:10.0", RxQ: 3, TxQ: 2}},
	}
}

// pciNIC is a PCI NIC of a capture whose sysfs path the capture does not
// show: the function is put directly under the host bridge.
func pciNIC(name, driver, bus string, rx, tx int) CaptureNIC {
	return CaptureNIC{Name: name, Driver: driver, DriverBus: "pci",
		Device: "/sys/devices/pci0000:00/" + bus, RxQ: rx, TxQ: tx}
}

// NetutilsMlx4Capture: 2 x Xeon X5650 (12 CPUs, nodes interleaved
// even/odd) with a ConnectX-3 (mlx4_en eth2, IF-N vectors beside the
// mlx4-comp/async event queues) and a BCM5709 (bnx2 eth0, eth1, IF-N).
func NetutilsMlx4Capture() *Capture {
	return &Capture{
		NCPU:           12,
		InterruptsFile: "netutils-2xX5650-mlx4.interrupts",
		Nodes:          []string{"0,2,4,6,8,10", "1,3,5,7,9,11"},
		NICs: []CaptureNIC{
			pciNIC("eth0", "bnx2", "0000:02:00.0", 8, 8),
			pciNIC("eth1", "bnx2", "0000:02:00.1", 8, 8),
			pciNIC("eth2", "mlx4_en", "0000:07:00.0", 8, 8),
		},
	}
}

// NetutilsQlcnicCapture: 2 x Xeon E5-2687W v4 (48 CPUs) with a QLogic
// cLOM8214 (qlcnic eth0, eth1: 4 rx rings, 1 tx ring whose interrupt is
// shared with the last rx ring, IF-tx-0-rx-3).
func NetutilsQlcnicCapture() *Capture {
	return &Capture{
		NCPU:           48,
		InterruptsFile: "netutils-2xE5-2687W-qlcnic.interrupts",
		Nodes:          []string{"0-11,24-35", "12-23,36-47"},
		NICs: []CaptureNIC{
			pciNIC("eth0", "qlcnic", "0000:05:00.0", 4, 1),
			pciNIC("eth1", "qlcnic", "0000:05:00.1", 4, 1),
		},
	}
}

// NetutilsIgbIxgbeCapture: 2 x Xeon E5-2640 v2 (32 CPUs) with an I350
// (igb eth0, eth1) and an 82599ES port (ixgbe eth5, 32 queues), all
// IF-TxRx-N with an IF misc vector.
func NetutilsIgbIxgbeCapture() *Capture {
	return &Capture{
		NCPU:           32,
		InterruptsFile: "netutils-2xE5-2640-igb-ixgbe.interrupts",
		Nodes:          []string{"0-7,16-23", "8-15,24-31"},
		NICs: []CaptureNIC{
			pciNIC("eth0", "igb", "0000:02:00.0", 8, 8),
			pciNIC("eth1", "igb", "0000:02:00.1", 8, 8),
			pciNIC("eth5", "ixgbe", "0000:04:00.0", 32, 32),
		},
	}
}

// NetutilsMlx5Capture: a Core 2 Quad Q6700 (4 CPUs) with a two-port
// mlx5 NIC on an old kernel (mlx5_pages_eq, mlx5_cmd_eq, mlx5_async_eq
// beside mlx5_compN).
func NetutilsMlx5Capture() *Capture {
	return &Capture{
		NCPU:           4,
		InterruptsFile: "netutils-q6700-mlx5.interrupts",
		Nodes:          []string{"0-3"},
		NICs: []CaptureNIC{
			pciNIC("enp1s0f0", "mlx5_core", "0000:01:00.0", 4, 4),
			pciNIC("enp1s0f1", "mlx5_core", "0000:01:00.1", 4, 4),
		},
	}
}

// VmxnetCapture: a VMware guest (8 vCPUs) with a vmxnet3 NIC in
// buddy-share mode (IF-rxtx-N, IF-event-N) on a 6.2+ kernel's PCI column.
func VmxnetCapture() *Capture {
	return &Capture{
		NCPU:           8,
		InterruptsFile: "dpip-vmxnet3.interrupts",
		NICs:           []CaptureNIC{pciNIC("eth0", "vmxnet3", "0000:03:00.0", 8, 8)},
	}
}

// CxgbCapture: a 24-CPU host with a Chelsio adapter whose two ports
// (enp5s0f4, enp5s0f4d1) share PCI function 0000:05:00.4 and name their
// queue-set vectors "IF (queue N)".
func CxgbCapture() *Capture {
	const bus = "0000:05:00.4"
	return &Capture{
		NCPU:           24,
		InterruptsFile: "irqbalance-202-cxgb4.interrupts",
		NICs: []CaptureNIC{
			pciNIC("enp5s0f4", "cxgb4", bus, 4, 4),
			pciNIC("enp5s0f4d1", "cxgb4", bus, 15, 15),
		},
	}
}

// ManaCapture: an Azure VM (4 vCPUs) with a MANA NIC, whose IRQs sit on
// the Hyper-V PCI MSI domain ("Hyper-V PCIe MSI", a chip name of three
// words) and are named mana_qN@pci:BUS; queues 0 and 2 share CPU 3.
func ManaCapture() *Capture {
	return &Capture{
		NCPU: 4,
		Interrupts: []string{
			" 25:          1        103          0    3038084  Hyper-V PCIe MSI 4138200989697-edge      mana_q0@pci:7870:00:00.0",
			" 26:          0          1    4012447          0  Hyper-V PCIe MSI 4138200989698-edge      mana_q1@pci:7870:00:00.0",
			" 27:     157181         10          1    3007990  Hyper-V PCIe MSI 4138200989699-edge      mana_q2@pci:7870:00:00.0",
			" 28:    3593858          0          0          1  Hyper-V PCIe MSI 4138200989700-edge      mana_q3@pci:7870:00:00.0 ",
		},
		NICs: []CaptureNIC{{Name: "enP30832s1", Driver: "mana", DriverBus: "pci",
			Device: "/sys/devices/pci7870:00/7870:00:00.0", RxQ: 4, TxQ: 4}},
	}
}

// xenNIC is a xen-netfront NIC: the xenbus device vif-N, driver "vif".
func xenNIC(name string, devid, queues int) CaptureNIC {
	return CaptureNIC{Name: name, Driver: "vif", DriverBus: "xen",
		Device: fmt.Sprintf("/sys/devices/vif-%d", devid), RxQ: queues, TxQ: queues}
}

// XenNetfrontCapture: an 8-vCPU Xen guest (Ubuntu 4.4 kernel) whose
// xen-netfront NIC has 8 queues with split event channels, named after
// the xenbus device (vif0-qN-tx, vif0-qN-rx), beside blkif and xenbus.
func XenNetfrontCapture() *Capture {
	return &Capture{
		NCPU: 8,
		Interrupts: []string{
			" 96:        740          0          0          0          0          0          0          0   xen-dyn-event     xenbus",
			" 97:       5501       5081          0          0          0          0          0      51094   xen-dyn-event     blkif",
			" 98:       1073       7416          0          0          0       1558      95081       8082   xen-dyn-event     blkif",
			" 99:   20281233          0          0          0          0          0          0      55041   xen-dyn-event     blkif",
			"100:         33          0          0         23          0    4188616          0          0   xen-dyn-event     vif0-q0-tx",
			"101:      13253      17347    2131477       7309    3249375       2001      31157      10554   xen-dyn-event     vif0-q0-rx",
			"102:      58693     107292    4337650     110674      39930     106047    4305635        140   xen-dyn-event     vif0-q1-tx",
			"103:     656748    1150449    1125036    1065174   13108012     971109     865388     944699   xen-dyn-event     vif0-q1-rx",
			"104:      10543     443011      22708       8635       7806     146959     361561      83056   xen-dyn-event     vif0-q2-tx",
			"105:     130852     163184     166057     162507     161176     156450     141922     281539   xen-dyn-event     vif0-q2-rx",
			"106:     658740    1496036    1491714    1285643     630852     500047    1120728    2534124   xen-dyn-event     vif0-q3-tx",
			"107:      53102      74571      52064     130077      71417     134990      69415     139662   xen-dyn-event     vif0-q3-rx",
			"108:     395465     358218     770193    1239849     632878    1261777    1151706    1010945   xen-dyn-event     vif0-q4-tx",
			"109:     907274    1121461    1023191    1013108     912284     554559     558891    1329253   xen-dyn-event     vif0-q4-rx",
			"110:    1068280    1312490     788823     736697     998768    1154514    2449043    1219128   xen-dyn-event     vif0-q5-tx",
			"111:     776191     800310     757765    1257341     715221     964468     589224     490463   xen-dyn-event     vif0-q5-rx",
			"112:      15505      16092       7834      75982      17971      37643      32921       5449   xen-dyn-event     vif0-q6-tx",
			"113:     517503    1040301     263799     501419     556065     202675     207788     486414   xen-dyn-event     vif0-q6-rx",
			"114:     676327     490391     234850     881162     395372     424661     860976     889300   xen-dyn-event     vif0-q7-tx",
			"115:     302970     386996     134085     247233     326422     384055      93777     213487   xen-dyn-event     vif0-q7-rx",
		},
		NICs: []CaptureNIC{xenNIC("eth0", 0, 8)},
	}
}

// XenNetfrontSingleCapture: an 8-vCPU Xen HVM guest whose whole
// /proc/interrupts shows one xen-netfront event channel, named after the
// interface (eth0), with 749,775,929 interrupts, all on CPU 0.
func XenNetfrontSingleCapture() *Capture {
	return &Capture{
		NCPU:           8,
		InterruptsFile: "hushi55-xen-netfront.interrupts",
		NICs:           []CaptureNIC{xenNIC("eth0", 0, 1)},
	}
}

// NetutilsTg3Mlx4Capture: 2 x Xeon E5-2690 (16 CPUs) with a BCM5719
// (tg3 eth0, eth1: vector 0 IF-tx-0, rx rings on IF-rx-1..4) and a
// two-port ConnectX-3 Pro (mlx4_en eth6, eth7 on one PCI function).
func NetutilsTg3Mlx4Capture() *Capture {
	const mlx = "0000:04:00.0"
	return &Capture{
		NCPU:           16,
		InterruptsFile: "netutils-2xE5-2690-tg3-mlx4.interrupts",
		Nodes:          []string{"0-7", "8-15"},
		NICs: []CaptureNIC{
			pciNIC("eth0", "tg3", "0000:03:00.0", 4, 1),
			pciNIC("eth1", "tg3", "0000:03:00.1", 4, 1),
			pciNIC("eth6", "mlx4_en", mlx, 8, 8),
			pciNIC("eth7", "mlx4_en", mlx, 8, 8),
		},
	}
}

// NetutilsE1000eIgbCapture: 2 x Xeon E5530 (16 CPUs, one NUMA node as
// lscpu shows it) with two 82574L (e1000e eth0, eth1 in MSI-X mode:
// IF-rx-0, IF-tx-0 and the misc vector IF) and an 82576 port (igb eth3,
// 8 IF-TxRx-N and IF).
func NetutilsE1000eIgbCapture() *Capture {
	return &Capture{
		NCPU:           16,
		InterruptsFile: "netutils-2xE5530-e1000e-igb.interrupts",
		Nodes:          []string{"0-15"},
		NICs: []CaptureNIC{
			pciNIC("eth0", "e1000e", "0000:03:00.0", 1, 1),
			pciNIC("eth1", "e1000e", "0000:02:00.0", 1, 1),
			pciNIC("eth3", "igb", "0000:08:00.1", 8, 8),
		},
	}
}

// NetutilsI40eE1000eCapture: a Xeon E3-1271 v3 (4 CPUs) with an X710
// port (i40e eth0: misc, 4 TxRx and the flow director vector), an I217
// (e1000e eth2, one MSI vector named IF) and an I210/I350 port (igb
// eth3).
func NetutilsI40eE1000eCapture() *Capture {
	return &Capture{
		NCPU:           4,
		InterruptsFile: "netutils-1xE3-1271-i40e-e1000e-igb.interrupts",
		Nodes:          []string{"0-3"},
		NICs: []CaptureNIC{
			pciNIC("eth0", "i40e", "0000:01:00.0", 4, 4),
			pciNIC("eth2", "e1000e", "0000:00:19.0", 1, 1),
			pciNIC("eth3", "igb", "0000:04:00.0", 4, 4),
		},
	}
}

// StmmacIntelCapture: an Intel PSE/mGbE stmmac port (eth0) on a 4-CPU
// host, one MSI vector per rx and per tx queue ("eth0:rx-N",
// "eth0:tx-N") and a safety vector, on a pre-6.2 kernel (IR-PCI-MSI with
// the requester ID in the hwirq: 0000:00:1d.1). Queues 1 and 2 were
// pinned to CPU 2 by the poster.
func StmmacIntelCapture() *Capture {
	return &Capture{
		NCPU: 4,
		Interrupts: []string{
			" 131:     251918         41          0          0  IR-PCI-MSI 477184-edge      eth0:rx-0",
			" 132:      18969          1          0          0  IR-PCI-MSI 477185-edge      eth0:tx-0",
			" 133:          0          0     295872          0  IR-PCI-MSI 477186-edge      eth0:rx-1",
			" 134:          0          0      16136          0  IR-PCI-MSI 477187-edge      eth0:tx-1",
			" 135:          0          0     288042          0  IR-PCI-MSI 477188-edge      eth0:rx-2",
			" 136:          0          0      16135          0  IR-PCI-MSI 477189-edge      eth0:tx-2",
			" 137:          0     211177          0          0  IR-PCI-MSI 477190-edge      eth0:rx-3",
			" 138:          2      16144          0          0  IR-PCI-MSI 477191-edge      eth0:tx-3",
			" 139:          0          0          0          0  IR-PCI-MSI 477192-edge      eth0:rx-4",
			" 140:          0          0          0          0  IR-PCI-MSI 477193-edge      eth0:tx-4",
			" 141:          0          0          0          0  IR-PCI-MSI 477194-edge      eth0:rx-5",
			" 142:          0          0          0          0  IR-PCI-MSI 477195-edge      eth0:tx-5",
			" 143:          0          0          0          0  IR-PCI-MSI 477196-edge      eth0:rx-6",
			" 144:          0          0          0          0  IR-PCI-MSI 477197-edge      eth0:tx-6",
			" 145:          0          0          0          0  IR-PCI-MSI 477198-edge      eth0:rx-7",
			" 146:          0          0          0          0  IR-PCI-MSI 477199-edge      eth0:tx-7",
			" 157:          0          0          0          0  IR-PCI-MSI 477210-edge      eth0:safety-ue",
		},
		NICs: []CaptureNIC{{Name: "eth0", Device: "/sys/devices/pci0000:00/0000:00:1d.1", RxQ: 8, TxQ: 8}},
	}
}

// EnetcIMX95Capture: an NXP i.MX95 (6 CPUs) ENETC port (eth0) on a
// linux-next kernel of August 2025, its six IF-rxtxN vectors on the arm64 per-device MSI domain
// ("ITS-PCI-MSIX-0002:00:00.0"), each on a CPU of its own.
func EnetcIMX95Capture() *Capture {
	return &Capture{
		NCPU: 6,
		Interrupts: []string{
			"123:       4365          0          0          0          0          0 ITS-PCI-MSIX-0002:00:00.0   1 Edge      eth0-rxtx0",
			"124:          0        194          0          0          0          0 ITS-PCI-MSIX-0002:00:00.0   2 Edge      eth0-rxtx1",
			"125:          0          0        227          0          0          0 ITS-PCI-MSIX-0002:00:00.0   3 Edge      eth0-rxtx2",
			"126:          0          0          0        219          0          0 ITS-PCI-MSIX-0002:00:00.0   4 Edge      eth0-rxtx3",
			"127:          0          0          0          0        176          0 ITS-PCI-MSIX-0002:00:00.0   5 Edge      eth0-rxtx4",
			"128:          0          0          0          0          0        233 ITS-PCI-MSIX-0002:00:00.0   6 Edge      eth0-rxtx5",
		},
		NICs: []CaptureNIC{{Name: "eth0", Device: "/sys/devices/pci0002:00/0002:00:00.0", RxQ: 6, TxQ: 6}},
	}
}

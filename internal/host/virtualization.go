package host

// Virtualization facts: the cpuinfo "hypervisor" flag (read by the cpuinfo
// probe) and
//
//	/sys/hypervisor/type          xen
//	/sys/class/dmi/id/sys_vendor  QEMU | Amazon EC2 | Microsoft Corporation
//	/sys/class/dmi/id/product_name
func readVirtualization(r *reader) error {
	v := &Virtualization{Hypervisor: r.hypervisor}
	v.Type, _ = r.str("/sys/hypervisor/type")
	v.Vendor, _ = r.str("/sys/class/dmi/id/sys_vendor")
	v.Product, _ = r.str("/sys/class/dmi/id/product_name")
	if *v != (Virtualization{}) {
		r.snap.Virtualization = v
	}
	return nil
}

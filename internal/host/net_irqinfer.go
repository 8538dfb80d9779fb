package host

import (
	"cmp"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// A tree that holds /proc/interrupts but no /sys/class/net (the text
// people post when they ask about a Redis host's interrupts) still names
// its NICs in the IRQ names:
//
//	 98:   35   0  2902361   PCI-MSI-X  eth1-0
//	 36:    0  29917    0   IR-PCI-MSI 2097153-edge  enp4s0f0-TxRx-0
//	 25:    1    103    0   Hyper-V PCIe MSI 4138200989697-edge  mana_q0@pci:7870:00:00.0
//
// inferNICs derives a NIC from each name shape the matcher knows
// (net_irqmap.go's queue rules, turned into shapes), then lets the
// matcher map it as it would a NIC read from sysfs. Only names whose shape
// is a queue's become NICs; a shape that also fits other devices ({IF}-N)
// needs the numbers 0, 1 ... to be there, and a lone name only counts when
// it is a network interface's name.

// inferredNote is NIC.Inferred for every NIC inferInterruptNICs makes.
const inferredNote = "from /proc/interrupts names only: no /sys/class/net in this tree (queue counts, NUMA node and driver unknown unless the names say them)"

// nicShape is one IRQ name shape that names a NIC: a queue rule of
// irqRules with its placeholders turned into named groups, if
// (interface), drv (driver), bus (PCI function), virtio (virtio device),
// xen (xen-netfront vif), and its number into n.
type nicShape struct {
	re   *regexp.Regexp
	weak bool // other devices use the shape too: needs numbers 0 and 1 at least
}

const pciRe = `[0-9a-f]{4,}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]`

// weakRules are the queue rules whose names other devices' IRQs also
// take ("name-0", "name-q0", "name-rxtx0").
var weakRules = map[string]bool{"if-n": true, "if-q": true, "enetc": true}

// nicShapes are irqRules' queue rules as shapes, in the matcher's order,
// compiled on first use. A rule for one driver whose names do not carry
// {DRIVER} (tg3's IF-rx-N, gve's block names) is left out: the names
// alone would claim that driver for every NIC of the shape, and its
// renumbering with it; the generic rule of the same shape stands in.
var nicShapes = sync.OnceValue(func() []nicShape {
	var out []nicShape
	for _, r := range irqRules {
		if r.kind == "" || (r.driver != "" && !strings.Contains(r.tmpl, "{DRIVER}")) {
			continue
		}
		drv := `(?P<drv>[a-z][a-z0-9_]*)`
		if r.driver != "" {
			drv = "(?P<drv>" + regexp.QuoteMeta(r.driver) + ")"
		}
		ifGroup := `(?P<if>[^ :@]+?)`
		if strings.Contains(r.tmpl, "{DRIVER}") {
			ifGroup = `(?P<if>[^ :@-]+)` // DRIVER-IF-...: the first dash ends the driver
		}
		expr := strings.NewReplacer("{IF}", ifGroup, "{DRIVER}", drv, "{BUS}", "(?P<bus>"+pciRe+")",
			"{VIRTIO}", `(?P<virtio>virtio\d+)`, "{XENVIF}", `(?P<xen>vif\d+)`).Replace(r.tmpl)
		expr = strings.Replace(expr, `(\d+)`, `(?P<n>\d+)`, 1)
		out = append(out, nicShape{re: regexp.MustCompile("^(?:" + expr + ")$"), weak: weakRules[r.name]})
	}
	return out
})

// loneIfName is the name a single-queue NIC's only vector carries: the
// kernel's eth%d or a udev predictable name (eno1, ens192, enp4s0f0,
// enP2p1s0f0np0, enX0); other lone names (timer, i8042, ahci) are not
// NICs.
var loneIfName = regexp.MustCompile(`^(?:eth\d+|en[opsxPXv][0-9a-zA-Z]*\d[0-9a-z]*)$`)

// inferredNIC is a NIC taking shape from the names.
type inferredNIC struct {
	nic  NIC
	nums map[int]bool // numbers of weak-shape names
	weak bool         // only weak shapes named it
	lone bool         // only its lone name
}

// interruptNICs returns the NICs the IRQ names of in show, not yet
// mapped: the matcher maps them as it maps NICs read from sysfs
// (mapQueueIRQs), and keepInferred then drops the ones it found nothing for.
func interruptNICs(in *Interrupts) []NIC {
	byKey := map[string]*inferredNIC{}
	var order []string
	for i := range in.IRQs {
		for _, name := range in.IRQs[i].Actions() {
			key, n, weak, num, ok := nicOfName(name)
			if !ok {
				continue
			}
			c := byKey[key]
			if c == nil {
				c = &inferredNIC{nic: n, nums: map[int]bool{}, weak: true, lone: true}
				byKey[key] = c
				order = append(order, key)
			}
			c.lone = c.lone && num == loneName
			c.weak = c.weak && (weak || num == loneName)
			if weak {
				c.nums[num] = true
			}
		}
	}
	var out []NIC
	for _, k := range order {
		c := byKey[k]
		if c.weak && !c.lone && !(c.nums[0] && c.nums[1]) {
			continue // "name-0" alone is as likely another device's
		}
		n := c.nic
		n.PCIAddress = cmp.Or(n.PCIAddress, onePCIFunction(in, n.Name))
		out = append(out, n)
	}
	return out
}

// keepInferred keeps the inferred NICs the matcher gave an IRQ to, and
// the lone-named ones (a single-queue NIC's only vector). Their queues
// are unknown, not absent: no mapped IRQ is "without a queue".
func keepInferred(nics []NIC) []NIC {
	var out []NIC
	for _, n := range nics {
		lone := len(n.QueueIRQs) == 0 && len(n.UnmappedIRQs) == 0 && len(n.OtherIRQs) > 0 && loneIfName.MatchString(n.Name)
		if len(n.QueueIRQs) == 0 && len(n.UnmappedIRQs) == 0 && !lone {
			continue // the name looked like a queue's, but no rule maps it
		}
		for i := range n.QueueIRQs {
			n.QueueIRQs[i].NoQueue = false
		}
		unmapVectorNumbered(&n)
		out = append(out, n)
	}
	return out
}

// loneName is nicOfName's num for a lone interface name.
const loneName = -2

// nicOfName returns the NIC an IRQ name shows, keyed by what names it;
// num is the number of a weak shape's name, -2 for a lone name. When
// several shapes fit a name with an interface in it, the one that leaves
// the shortest interface name wins: the words a driver puts between the
// interface and the number (bnx2x's eth3-fp-0) belong to the shape, and
// {IF}-N, which fits every name ending in a number, would keep them in
// the name ("eth3-fp").
func nicOfName(name string) (key string, n NIC, weak bool, num int, ok bool) {
	for _, s := range nicShapes() {
		m := s.re.FindStringSubmatch(name)
		if m == nil {
			continue
		}
		named := matchGroup(s.re, m, "if") != ""
		c, cnum := shapeNIC(s.re, m)
		if ok && (!named || len(c.Name) >= len(n.Name)) {
			continue
		}
		n, weak, num, ok = c, s.weak, cnum, true
		if !named {
			break // named by its bus or device: the first shape's
		}
	}
	if ok {
		return n.Name, n, weak, num, true
	}
	if loneIfName.MatchString(name) {
		return name, NIC{Name: name, Inferred: inferredNote}, false, loneName, true
	}
	return "", NIC{}, false, 0, false
}

// matchGroup is the named group of re's match m, "" when re has none.
func matchGroup(re *regexp.Regexp, m []string, group string) string {
	if i := re.SubexpIndex(group); i > 0 {
		return m[i]
	}
	return ""
}

// shapeNIC is the NIC and queue number a shape's match m names.
func shapeNIC(re *regexp.Regexp, m []string) (NIC, int) {
	n := NIC{Driver: matchGroup(re, m, "drv"), PCIAddress: matchGroup(re, m, "bus"), Inferred: inferredNote}
	switch {
	case matchGroup(re, m, "virtio") != "":
		n.Name, n.Device = matchGroup(re, m, "virtio"), matchGroup(re, m, "virtio")
	case matchGroup(re, m, "xen") != "":
		n.Name, n.Device = matchGroup(re, m, "xen"), "vif-"+matchGroup(re, m, "xen")[len("vif"):]
	case matchGroup(re, m, "if") != "":
		n.Name = matchGroup(re, m, "if")
	default:
		n.Name = n.PCIAddress // no interface name in the IRQ names
	}
	num, _ := strconv.Atoi(matchGroup(re, m, "n"))
	return n, num
}

// onePCIFunction is the PCI function that the MSI evidence of every IRQ
// named after the NIC points at (msiSource: the chip column, or x86's
// MSI hwirq), "" when they do not agree or say nothing.
func onePCIFunction(in *Interrupts, name string) string {
	mentions := regexp.MustCompile(`(^|[^A-Za-z0-9])` + regexp.QuoteMeta(name) + `([^A-Za-z0-9]|$)`)
	bus := ""
	for i := range in.IRQs {
		q := &in.IRQs[i]
		if !mentions.MatchString(q.Name) {
			continue
		}
		b, _, _ := msiSource(q)
		if b == "" || (bus != "" && b != bus) {
			return ""
		}
		bus = b
	}
	return bus
}

// unmapVectorNumbered: IF-rx-N names that start above 0 beside IF-tx-N
// ones number vectors, not queues (tg3's IF-rx-1 is rx ring 0, vmxnet3's
// rx vectors follow its tx ones); the matcher renumbers them by the
// driver, which a tree without sysfs does not name. They are left
// unmapped, saying why, rather than given to queues the names do not
// number. (Other names that start above 0 are a cut capture's.)
func unmapVectorNumbered(n *NIC) {
	low, tx := -1, false
	for _, m := range n.QueueIRQs {
		tx = tx || m.Rule == "if-tx"
		if m.Rule == "if-rx" && (low < 0 || m.Queue < low) {
			low = m.Queue
		}
	}
	if low <= 0 || !tx {
		return
	}
	var keep []QueueIRQ
	for _, m := range n.QueueIRQs {
		if m.Rule != "if-rx" {
			keep = append(keep, m)
			continue
		}
		n.UnmappedIRQs = append(n.UnmappedIRQs, NICIRQ{IRQ: m.IRQ, Name: m.Name, Why: fmt.Sprintf(
			"the IF-rx-N names start at %d, not 0, beside IF-tx-N ones: tg3 and vmxnet3 number vectors that way, not queues, and without sysfs the driver is unknown", low)})
	}
	n.QueueIRQs = keep
}

package rules

import (
	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "hugetlb-reserved", Section: "memory", Severity: doctor.Low,
		Title:  "Huge pages are reserved but unused",
		Why:    "pages in the hugetlbfs pool are taken from RAM and only hugetlbfs or SHM_HUGETLB users get them; redis-server's allocator uses neither",
		Source: "K-hugetlbpage (HugePages_Total/Free); W (echo 2048 > nr_hugepages \"for Redis\")",
		Reads:  []string{"sysctls", "meminfo"},
		Needs:  doctor.NeedHost,
		Proves: []string{"/proc/meminfo HugePages_Total"},
		Check:  checkHugetlb,
	})
}

func checkHugetlb(f *doctor.Facts) doctor.Result {
	m := f.Host.Memory
	if m.HugePagesTotal == nil || m.HugePagesFree == nil || m.Hugepagesize == nil {
		return doctor.Skip("/proc/meminfo has no HugePages fields")
	}
	total, free := *m.HugePagesTotal, *m.HugePagesFree
	evs := []doctor.Evidence{
		doctor.Ev("/proc/meminfo HugePages_Total", total),
		doctor.Ev("/proc/meminfo HugePages_Free", free),
		doctor.Ev("/proc/meminfo Hugepagesize", doctor.Bytes(*m.Hugepagesize)),
	}
	if total == 0 || free < total {
		return doctor.Pass("%d huge pages reserved, %d in use", total, total-free).With(evs...)
	}
	nr, nev, _ := f.Sysctl("vm.nr_hugepages")
	fix := new(doctor.Fix).Sysctl("vm.nr_hugepages", "0", nr, "give the reserved memory back")
	fix.Caution = "check that nothing else on the host (a database, DPDK, a JVM with -XX:+UseLargePages) wants these pages before freeing them"
	return doctor.Fire("%d huge pages (%s) are reserved and none is used", total, doctor.Bytes(total**m.Hugepagesize)).With(append(evs, nev)...).WithFix(fix).
		Note("the write-up reserves 2048 huge pages for Redis; redis-server (jemalloc or libc) never maps hugetlbfs, so that memory is simply lost to it")
}

package labdata

// The kinds of a lab target (TargetSpec.Kind).
const (
	// KindManaged: redline starts redis-server on loopback.
	KindManaged = "managed"
	// KindManagedCluster: a Redis Cluster of such servers.
	KindManagedCluster = "managed-cluster"
	// KindNetns: two network namespaces joined by a veth pair, the
	// server in one, the load from the other.
	KindNetns = "netns"
	// KindAddress: an existing server (never flushed, restarted or
	// stopped).
	KindAddress = "address"
	// KindSSH: the server host is another machine, driven through a
	// redline session over ssh.
	KindSSH = "ssh"
)

package steer

// zeroBasedDrivers are drivers whose skbs reach napi_gro_receive with
// queue_mapping holding the rx queue itself: veth hands over the skb with
// the sender's tx queue index, which picked the receive queue. Drivers
// that call skb_record_rx_queue (virtio_net, mlx5, ixgbe, hns3 ...) store
// the queue + 1.
var zeroBasedDrivers = map[string]bool{"veth": true}

// DriverQueues returns a Joiner.ZeroBased function for devices whose
// drivers are known (from host.Snapshot's NICs, or a test's own veth).
func DriverQueues(drivers map[string]string) func(dev string) bool {
	return func(dev string) bool { return zeroBasedDrivers[drivers[dev]] }
}

// Package steer follows the packets of each NIC receive queue to the CPU
// that consumes them and moves the queue's IRQ there.
//
// The sampler (sampler_linux.go) opens two kernel tracepoints through
// perf_event_open, one ring buffer per CPU: net:napi_gro_receive_entry says
// which device queue received an skb, skb:skb_copy_datagram_iovec on which
// CPU and thread that skb was copied to user space. The Joiner matches them
// by skb address and counts packets per queue and consuming CPU. The
// Engine (engine.go) turns a period's counts and the host's topology into
// IRQ moves, with hysteresis, one core per queue and Redis's cores kept
// free. Neither part writes to the host: actuation belongs to the caller.
package steer

// Package seqpacket reads and writes a SOCK_SEQPACKET Unix socket through Go's poller,
// with the descriptors its messages carry (Linux: the host's socket to a sandbox helper,
// core/sandbox).
package seqpacket

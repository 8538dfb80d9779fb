// Package hostile is the index of redline's hostile-input suite: every
// input surface an untrusted party reaches (a server's reply, a file
// someone else wrote, a link or FIFO planted on a path, another user's
// listener) has a row in docs/security.md naming the test that proves its
// boundary, and this package's test requires each named test to exist.
// The tests themselves live beside the code they test.
package hostile

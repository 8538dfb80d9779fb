package remote

// KillTransport SIGKILLs the ssh client of c, as when the lab dies.
func KillTransport(c *Client) { c.kill() }

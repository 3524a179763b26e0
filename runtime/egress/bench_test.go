package egress

import (
	"io"
	"net"
	"testing"
)

// BenchmarkThroughput compares moving bytes to a sink on loopback directly
// and through a CONNECT tunnel of the proxy (itself on loopback).
func BenchmarkThroughput(b *testing.B) {
	sink, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer sink.Close()
	go func() {
		for {
			c, err := sink.Accept()
			if err != nil {
				return
			}
			go func() {
				io.Copy(io.Discard, c)
				c.Close() // tells the writer everything arrived
			}()
		}
	}()
	chunk := make([]byte, 1<<20)
	run := func(b *testing.B, c net.Conn) {
		b.SetBytes(int64(len(chunk)))
		for b.Loop() {
			if _, err := c.Write(chunk); err != nil {
				b.Fatal(err)
			}
		}
		c.(*net.TCPConn).CloseWrite()
		io.Copy(io.Discard, c) // wait until the sink has read everything
		c.Close()
	}
	b.Run("direct", func(b *testing.B) {
		c, err := net.Dial("tcp", sink.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		run(b, c)
	})
	b.Run("proxy", func(b *testing.B) {
		_, proxy := startProxy(b, []string{sink.Addr().String()}, nil, func(Event) {})
		status, c := connect(b, proxy, sink.Addr().String())
		if c == nil {
			b.Fatal(status)
		}
		run(b, c)
	})
}

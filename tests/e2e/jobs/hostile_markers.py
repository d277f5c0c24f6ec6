"""A job that sends the markers an adversary (or a buggy job) would: issue 10, items 10 and 11.
Raw datagrams, so that nothing on the client side cleans them up. Blocking sends: every one arrives."""
import os
import socket
import time

sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
sock.connect(os.environ["WATTWISE_SOCKET"])
pid = os.getpid()


def send(kind, name, t_ns=None, extra=b""):
    t = time.monotonic_ns() if t_ns is None else t_ns
    sock.send(b"ww1 %s %d %s pid=%d%s" % (kind, t, name, pid, extra))


now = time.monotonic_ns()
send(b"B", b"backwards", now)
send(b"E", b"backwards", now - 10**9)  # an end stamped a second before its begin
send(b"P", b"bad\xffutf8\xc3")  # invalid UTF-8
send(b"P", b"%1B[2J%1B]0;pwned%07red%1B[31m")  # terminal escape sequences
send(b"P", b"huge", None, b" samples=1e308 flops=1.7976931348623157e308")
send(b"P", b"future", 2**62 + 1)  # past any clock: malformed
send(b"B", b"ancient", 1)
send(b"E", b"ancient")
send(b"P", b"x" * 10000)  # past the 8 KiB datagram limit: malformed
for _ in range(20000):
    send(b"B", b"deep")
time.sleep(0.05)
for _ in range(20000):
    send(b"E", b"deep")
send(b"B", b"step")
send(b"B", b"step")  # a "step" inside a "step"
time.sleep(0.1)
send(b"E", b"step")
time.sleep(0.1)
send(b"E", b"step")

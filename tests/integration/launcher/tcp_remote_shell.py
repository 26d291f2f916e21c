#!/usr/bin/env python3
"""A test remote shell whose connection crosses the network, as ssh's does.

Why: netns_hosts.sh's agent runs `ip netns exec`, a local process: cutting a host's link leaves
it connected and killing it kills the remote command. A job's remote daemons behave differently
under ssh: the connection crosses the cut link, so neither side hears of the other's end. This
serves commands over TCP inside a network-namespace host and runs them from the launcher's side:
  tcp_remote_shell.py serve ADDRESS PORT       (in the host; one forked process per connection)
  tcp_remote_shell.py run ADDRESS PORT CMD...  (the agent: CMD's words joined by spaces, as ssh
                                                joins them, run by `sh -c` in a login-like env)
The client relays its stdin to the command and the command's stdout/stderr back, and exits with
the command's status. Like sshd without a terminal, the server does not stop the command when
the connection is lost. Threads: one per relayed stream, in each process.
"""
import json
import os
import socket
import struct
import subprocess
import sys
import threading

STDOUT, STDERR, EXIT = 1, 2, 3


def send_frame(sock, lock, kind, data):
    with lock:
        sock.sendall(struct.pack("!BI", kind, len(data)) + data)


def recv_exact(sock, count):
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def serve_connection(conn):
    reader = conn.makefile("rb")
    request = json.loads(reader.readline())
    env = {"HOME": os.environ.get("HOME", "/root"), "USER": "root", "LOGNAME": "root",
           "SHELL": "/bin/sh",
           "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
    child = subprocess.Popen(["sh", "-c", request["command"]], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    lock = threading.Lock()

    def pump_out(stream, kind):
        for chunk in iter(lambda: os.read(stream.fileno(), 65536), b""):
            try:
                send_frame(conn, lock, kind, chunk)
            except OSError:
                pass  # the connection is gone; keep draining so the command never blocks

    def pump_in():
        try:
            for chunk in iter(lambda: reader.read1(65536), b""):
                child.stdin.write(chunk)
                child.stdin.flush()
        except OSError:
            pass
        try:
            child.stdin.close()
        except OSError:
            pass

    threads = [threading.Thread(target=pump_out, args=(child.stdout, STDOUT)),
               threading.Thread(target=pump_out, args=(child.stderr, STDERR))]
    threading.Thread(target=pump_in, daemon=True).start()
    for thread in threads:
        thread.start()
    code = child.wait()
    for thread in threads:
        thread.join()
    try:
        send_frame(conn, lock, EXIT, struct.pack("!i", code if code >= 0 else 128 - code))
        conn.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    os._exit(0)


def serve(address, port):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((address, port))
    listener.listen(64)
    print("serving", flush=True)
    while True:
        conn, _ = listener.accept()
        if os.fork() == 0:
            listener.close()
            os.setsid()
            serve_connection(conn)
        conn.close()
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass


def run(address, port, words):
    sock = socket.create_connection((address, port))
    sock.sendall(json.dumps({"command": " ".join(words)}).encode() + b"\n")

    def pump_in():
        try:
            for chunk in iter(lambda: os.read(0, 65536), b""):
                sock.sendall(chunk)
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    threading.Thread(target=pump_in, daemon=True).start()
    while True:
        header = recv_exact(sock, 5)
        if header is None:
            sys.exit(255)  # as ssh does when the connection ends without the command's status
        kind, length = struct.unpack("!BI", header)
        data = recv_exact(sock, length)
        if data is None:
            sys.exit(255)
        if kind == EXIT:
            sys.exit(struct.unpack("!i", data)[0])
        os.write(1 if kind == STDOUT else 2, data)


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2], int(sys.argv[3]))
    else:
        run(sys.argv[2], int(sys.argv[3]), sys.argv[4:])

# Drives rxpath through pcap ports: frames in, frames out, counters; prints PASS/FAIL lines.
import json
import os
import shutil
import subprocess
import sys
import tempfile

from scapy.all import Ether, rdpcap, wrpcap  # noqa: F401  (re-exported for the tests)

RXPATH = os.environ.get("RXPATH", os.path.join(os.environ.get("BUILD", "build"), "rxpath"))
failures = 0


def check(name, cond, detail=""):
    """Prints one PASS or FAIL line; a failure carries what was seen."""
    global failures
    if cond:
        print("PASS " + name)
    else:
        failures += 1
        print("FAIL " + name)
        for line in str(detail).splitlines()[:20]:
            print("  " + line)
    sys.stdout.flush()
    return cond


class Result:
    def __init__(self, rc, summary, out, stderr):
        self.rc = rc
        self.summary = summary
        self.out = out          # port name -> list of scapy packets it sent
        self.stderr = stderr

    def drops(self, port=None):
        if port is None:
            return {k: v for k, v in self.summary.get("drops", {}).items() if v}
        for p in self.summary["ports"]:
            if p["port"] == port:
                return p["drops"]
        return {}

    def sent(self, port):
        return self.out.get(port, [])


def run(config, inputs, ports=("p0", "p1"), args=(), port_args=""):
    """
    Runs rxpath with pcap ports @ports (MACs 02:00:00:00:00:01, :02, ...),
    @config lines after the port lines, and @inputs {port: [frames]};
    @port_args (",clock=packets") goes on every port's spec.
    """
    tmp = tempfile.mkdtemp(prefix="rxlab-")
    try:
        lines = []
        for i, p in enumerate(ports):
            spec = "pcap:"
            if p in inputs:
                wrpcap(os.path.join(tmp, p + ".in.pcap"), inputs[p], linktype=1)  # Ethernet
                spec += "in=%s," % os.path.join(tmp, p + ".in.pcap")
            spec += "out=%s,mac=02:00:00:00:00:%02x%s" % (os.path.join(tmp, p + ".out.pcap"), i + 1, port_args)
            lines.append("port add %s %s" % (p, spec))
        lines += config
        conf = os.path.join(tmp, "rxpath.conf")
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        proc = subprocess.run([RXPATH, "run", "--json", "-i", "0", "-d", "20", "-c", conf] + list(args),
                              capture_output=True, text=True, timeout=60)
        summary = {}
        for line in proc.stdout.splitlines():
            if '"event":"summary"' in line:
                summary = json.loads(line)
        out = {}
        for p in ports:
            path = os.path.join(tmp, p + ".out.pcap")
            out[p] = list(rdpcap(path)) if os.path.exists(path) and os.path.getsize(path) > 24 else []
        return Result(proc.returncode, summary, out, proc.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def done():
    sys.exit(1 if failures else 0)

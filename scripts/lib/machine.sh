# Sourced by the benchmark scripts: describes the machine a result was measured on.

# machine_info MODE: date, mode, cores, CPU, memory, load average at the start and JDK, one per line
machine_info() {
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "mode: $1"
  echo "cores: $(nproc)"
  lscpu 2>/dev/null | grep -E '^Model name' | tr -s ' ' || true
  echo "memory: $(free -g 2>/dev/null | awk '/^Mem:/ {print $2 " GiB"}')"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
  java -version 2>&1 | head -1
}

// Preloaded into every process a bench starts (node --import): the bench holds the
// other end of this process's stdin, so when the bench goes away by any means (even SIGKILL)
// stdin ends and this process shuts down by itself instead of lingering on its port.
process.stdin.on('data', () => {});
process.stdin.on('error', () => {});
process.stdin.once('end', () => {
  process.kill(process.pid, 'SIGTERM');
  setTimeout(() => process.exit(1), 10_000).unref();
});

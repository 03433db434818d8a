// Preloaded (node --require) into a child process whose CPU time a benchmark wants, such as
// tsc in bench/plugin-scale.mjs: at exit it writes the process's own user + system CPU time,
// which other work on a shared machine disturbs less than wall time, as the last line of stderr.
process.on("exit", () => {
  const { user, system } = process.cpuUsage();
  process.stderr.write(`\ncpu-ms ${(user + system) / 1000}\n`);
});

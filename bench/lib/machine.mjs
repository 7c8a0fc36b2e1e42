import os from 'node:os';

/** What the numbers were measured on: they only compare within one run on one machine. */
export function machine() {
  const cpus = os.cpus();
  return {
    node: process.version,
    cpu: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    platform: `${os.platform()} ${os.arch()}`,
  };
}

export function formatMachine(m) {
  return `machine: node ${m.node}, ${m.cpu}, ${m.cores} cores, ${m.platform}`;
}

import { closeSync, openSync, writeSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * The witness of the soak's shell runs (forked by soak/run.mjs; argv[2]: the file it writes).
 * Each run (soak/mark.sh) connects to it on 127.0.0.1 and sends one line, its id
 * `<pid> <correlationId> <scheduler> <scheduledFor>`; the run and its sleep child hold the
 * connection, so it closes when the last of them is gone, however they ended (a SIGKILL too).
 * Each close is one line `C <closed µs> <opened µs> <id>` (`-` for a run that died before it sent
 * its id); the closed instant is an upper bound of that end, by the wall clock (bash's
 * EPOCHREALTIME reads the same). A process of its own, so that the driver's work (the proxies'
 * traffic) does not delay what it sees.
 *
 * IPC: sends `{ type: 'listening', port }`; answers `{ type: 'open' }` with
 * `{ type: 'open', runs: [{ id, openedUs }] }`, the connections still open (runs still alive).
 * Exits when the driver goes away.
 */
const out = openSync(process.argv[2], 'a');
const open = new Map();
const nowUs = () => Date.now() * 1000;

const server = createServer((socket) => {
  const run = { id: '-', openedUs: nowUs(), text: '' };
  open.set(socket, run);
  socket.setEncoding('utf8');
  socket.on('data', (chunk) => {
    if (run.id !== '-' || run.text.length > 512) return;
    run.text += chunk;
    const eol = run.text.indexOf('\n');
    if (eol >= 0) run.id = run.text.slice(0, eol).trim() || '-';
  });
  const closed = () => {
    if (!open.delete(socket)) return;
    // Date.now() floors the instant: one ms later is still an upper bound.
    writeSync(out, `C ${nowUs() + 1000} ${run.openedUs} ${run.id}\n`);
    socket.destroy();
  };
  socket.on('end', closed);
  socket.on('error', closed);
  socket.on('close', closed);
});
server.maxConnections = 10_000;
server.listen(0, '127.0.0.1', () => process.send({ type: 'listening', port: server.address().port }));
process.on('message', (message) => {
  if (message.type === 'open')
    process.send({
      type: 'open',
      runs: [...open.values()].map(({ id, openedUs }) => ({ id, openedUs })),
    });
});
process.on('disconnect', () => {
  server.close();
  closeSync(out);
  process.exit(0);
});

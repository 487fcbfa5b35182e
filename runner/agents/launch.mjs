// The agent's side of the model proxy, inside its sandbox: `node launch.mjs SOCKET PORT [--stdin FILE] -- COMMAND...`.
// The sandbox has no network but its own loopback; the proxy is a Unix socket file bound into it. This listens on
// the sandbox's 127.0.0.1:PORT, relays each connection to the socket, and runs COMMAND (the agent) once it
// listens, its standard input FILE (or nothing); its exit status is the agent's. Node's standard library only.
import fs from "node:fs";
import net from "node:net";
import { spawn } from "node:child_process";
import { constants } from "node:os";

const args = process.argv.slice(2);
const [socketPath, port] = args;
let rest = args.slice(2);
let stdinFile = null;
if (rest[0] === "--stdin") {
  stdinFile = rest[1];
  rest = rest.slice(2);
}
const [separator, ...command] = rest;
if (!socketPath || !port || separator !== "--" || command.length === 0) {
  console.error("usage: node launch.mjs SOCKET PORT [--stdin FILE] -- COMMAND [ARGS...]");
  process.exit(2);
}

const relay = net.createServer((client) => {
  const proxy = net.connect(socketPath);
  const close = () => { client.destroy(); proxy.destroy(); };
  client.on("error", close);
  proxy.on("error", close);
  client.on("close", close);
  proxy.on("close", close);
  client.pipe(proxy);
  proxy.pipe(client);
});

relay.on("error", (error) => {
  console.error(`[agent] the model proxy's relay failed: ${error.message}`);
  process.exit(125);
});

relay.listen(Number(port), "127.0.0.1", () => {
  const input = stdinFile ? fs.openSync(stdinFile, "r") : "ignore";
  const child = spawn(command[0], command.slice(1), { stdio: [input, "inherit", "inherit"], env: process.env });
  child.on("error", (error) => {
    console.error(`[agent] could not start ${command[0]}: ${error.message}`);
    process.exit(127);
  });
  child.on("exit", (code, signal) => {
    relay.close();
    process.exit(code ?? 128 + (constants.signals[signal] ?? 1));
  });
});

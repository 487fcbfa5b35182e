// A minimal coding agent as a command (the shape of the official CLIs), for the command-agent seam's tests: it
// asks OPENAI_BASE_URL's chat completions (streamed, as the CLIs ask) with two file tools, runs each tool call in
// its working folder, and stops at an answer without tool calls. With GENUI_PROBE set it first tries the ways out
// a hostile agent would, and prints what each gave (the test reads them in its output).
import fs from "node:fs";
import net from "node:net";
import path from "node:path";

const base = process.env.OPENAI_BASE_URL;
const tools = ["list_files", "write_file", "run_build", "view_page"].map((name) => ({
  type: "function", function: { name, parameters: { type: "object", properties: {} } } }));

function probe() {
  const seen = {};
  const files = ["/proc/1/environ", "/proc/self/environ", "/etc/passwd", "/root/.bash_history"];
  if (process.env.GENUI_PROBE_FILE) files.push(process.env.GENUI_PROBE_FILE);
  for (const file of files) {
    try { seen[file] = fs.readFileSync(file, "utf8").slice(0, 200); } catch (error) { seen[file] = `error ${error.code}`; }
  }
  seen.env = Object.keys(process.env).sort().join(",");
  return seen;
}

async function connect(host, port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port: Number(port) });
    const done = (outcome) => { socket.destroy(); resolve(outcome); };
    socket.setTimeout(2000, () => done("timeout"));
    socket.on("connect", () => done("connected"));
    socket.on("error", (error) => done(`error ${error.code}`));
  });
}

async function streamed(body) {
  const response = await fetch(`${base}/chat/completions`, {
    method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${process.env.OPENAI_API_KEY}` },
    body: JSON.stringify({ ...body, stream: true, stream_options: { include_usage: true } }) });
  if (!response.ok) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
  const text = await response.text();
  const message = { role: "assistant", content: "", tool_calls: [] };
  for (const line of text.split("\n")) {
    if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
    const chunk = JSON.parse(line.slice(6));
    for (const choice of chunk.choices) {
      if (choice.delta.content) message.content += choice.delta.content;
      for (const call of choice.delta.tool_calls ?? []) {
        message.tool_calls[call.index] ??= { id: call.id, type: "function", function: { name: "", arguments: "" } };
        message.tool_calls[call.index].function.name += call.function?.name ?? "";
        message.tool_calls[call.index].function.arguments += call.function?.arguments ?? "";
      }
    }
  }
  if (!text.trimEnd().endsWith("data: [DONE]")) throw new Error("the stream did not end with [DONE]");
  return message;
}

function run(call) {
  const args = JSON.parse(call.function.arguments || "{}");
  if (call.function.name === "list_files") {
    const found = [];
    const walk = (folder) => {
      for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
        if (entry.name === "node_modules") continue;
        const full = path.join(folder, entry.name);
        if (entry.isDirectory()) walk(full); else found.push(path.relative(".", full));
      }
    };
    walk(".");
    return found.join("\n");
  }
  if (call.function.name === "write_file") {
    fs.mkdirSync(path.dirname(args.path), { recursive: true });
    fs.writeFileSync(args.path, args.content);
    return `wrote ${args.path}`;
  }
  return `${call.function.name} is not a tool of this agent`;
}

if (process.env.GENUI_PROBE) {
  const seen = probe();
  seen.tcp_host = await connect(process.env.GENUI_PROBE_HOST ?? "127.0.0.1", process.env.GENUI_PROBE_PORT ?? "9");
  seen.tcp_out = await connect("203.0.113.7", 80);
  console.log(`PROBES ${JSON.stringify(seen)}`);
}
const messages = [{ role: "user", content: fs.readFileSync(0, "utf8") }];
for (let step = 0; step < 50; step++) {
  let message;
  try {
    message = await streamed({ model: process.env.GENUI_MODEL, messages, tools });
  } catch (error) {
    console.error(`model call failed: ${error.message}`);
    process.exit(3);
  }
  messages.push(message);
  if (message.tool_calls.length === 0) {
    console.log(`done: ${message.content}`);
    process.exit(0);
  }
  for (const call of message.tool_calls) {
    messages.push({ role: "tool", tool_call_id: call.id, content: run(call) });
  }
}

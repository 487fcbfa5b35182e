// A build started ahead of its sources (runner/sandbox/pipeline.py, spare builds): run as
//   node --input-type=module -e <this file> warm-up|cold <script> <args...>
// inside the build sandbox, it loads Vite (what every build loads first), with "warm-up" warms Vite's bundler on a
// project of its own, then waits for one line on stdin. "go": the workspace is filled; it runs <script> as
// `node <script> <args...>` would. Anything else, or the end of stdin: it exits without building. Nothing of the
// workspace is read before "go".
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [mode, script, ...args] = process.argv.slice(1);

function firstLine() {
  return new Promise((resolve) => {
    let text = "";
    process.stdin.setEncoding("utf8");
    process.stdin.on("data", (chunk) => {
      text += chunk;
      const end = text.indexOf("\n");
      if (end >= 0) {
        process.stdin.destroy(); // no open handle may keep the build's process alive
        resolve(text.slice(0, end));
      }
    });
    process.stdin.on("end", () => resolve(text));
    process.stdin.on("error", () => resolve(""));
  });
}

// The first build in a Node process pays once for what every later one reuses: the code of Vite's build path
// compiled, the bundler's first parse, transform and minify. One small build of a project in the sandbox's own /tmp
// (never the workspace, never written out) pays it before the sources come (about 50 ms of a smoke build,
// docs/performance.md). It warms nothing the build reads: no config, plugin or file of the workspace. A go line that
// comes during the warm-up waits for its end: at most the warm-up's time, most of which the build then saves.
async function warmUp(vite) {
  const root = await mkdtemp(join(tmpdir(), "genui-warm-up-"));
  try {
    await writeFile(join(root, "index.html"),
      '<!doctype html><html><body><p id="out"></p><script type="module" src="./main.js"></script></body></html>\n');
    await writeFile(join(root, "main.js"),
      'const parts = ["warm", "up"].map((part) => part.toUpperCase());\n' +
      'document.getElementById("out").textContent = parts.join(" ");\n');
    await vite.build({ root, configFile: false, envDir: false, logLevel: "silent", build: { write: false } });
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

// What the warm-up did, for whoever runs after "go" to read (the build ignores it): {ms} or {error}.
globalThis.__genuiSpareWarmUp = undefined;
const go = firstLine();
try {
  const vite = await import("vite");
  if (mode === "warm-up") {
    const started = performance.now();
    try {
      await warmUp(vite);
      globalThis.__genuiSpareWarmUp = { ms: Math.round(performance.now() - started) };
    } catch (error) {
      // a warm-up that failed only costs its time: the build goes on as a cold one
      globalThis.__genuiSpareWarmUp = { error: String(error?.message ?? error).split("\n")[0] };
    }
  }
} catch {
  // the build itself imports Vite again and reports why it fails
}
if ((await go) !== "go") process.exit(0);
process.argv = [process.argv[0], script, ...args];
await import(script);

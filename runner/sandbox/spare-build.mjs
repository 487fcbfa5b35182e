// A build started ahead of its sources (runner/sandbox/pipeline.py, spare builds): run as
//   node --input-type=module -e <this file> <script> <args...>
// inside the build sandbox, it loads Vite (what every build loads first), then waits for one line on stdin.
// "go": the workspace is filled; it runs <script> as `node <script> <args...>` would. Anything else, or the end
// of stdin: it exits without building. Nothing of the workspace is read before "go".
const [script, ...args] = process.argv.slice(1);

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

try {
  await import("vite");
} catch {
  // the build itself imports it again and reports why it fails
}
if ((await firstLine()) !== "go") process.exit(0);
process.argv = [process.argv[0], script, ...args];
await import(script);

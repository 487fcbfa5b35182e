// Reserved tool client: generated apps call tools through the artifact server's bridge.
// The server validates arguments and results against the task's tool schemas and logs every call.
export async function callTool(name, args = {}) {
  const response = await fetch("./__tools/call", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ tool: name, arguments: args }),
  });
  const payload = await response.json();
  if (!response.ok || payload.error) {
    throw new Error(payload.error || `tool ${name} failed with HTTP ${response.status}`);
  }
  return payload.result;
}

export async function listTools() {
  const response = await fetch("./__tools/list");
  return (await response.json()).tools;
}

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

// Reserved resource client: the task's public resources (uri, name, mime_type, description), served by the
// same bridge; every read is logged to the evidence like a tool call.
export async function readResource(uri) {
  const response = await fetch("./__resources/read", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ uri }),
  });
  const payload = await response.json();
  if (!response.ok || payload.error) {
    throw new Error(payload.error || `resource ${uri} failed with HTTP ${response.status}`);
  }
  return payload.resource.contents;
}

export async function listResources() {
  const response = await fetch("./__resources/list");
  return (await response.json()).resources;
}

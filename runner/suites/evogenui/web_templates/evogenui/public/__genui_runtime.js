// Reserved runtime of the EvoGenUI-Bench scaffold: the page-side half of the tool bridge.
// src/genui/toolClient.ts and resourceClient.ts call window.__GENUI_TOOL_CALL__ / __GENUI_RESOURCE_READ__;
// both post to the artifact server, which validates, runs the backend and logs every call with its state.
(() => {
  const scenario = () => new URLSearchParams(window.location.search).get("scenario") || "default";
  const clone = (value) => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)));
  const toolLogs = [];
  const resourceLogs = [];
  let schemas = null;

  const inputSchemas = async () => {
    if (schemas === null) {
      const response = await fetch("./__tools/list");
      const listed = response.ok ? (await response.json()).tools || [] : [];
      schemas = Object.fromEntries(listed.map((tool) => [tool.name, tool.inputSchema || {}]));
    }
    return schemas;
  };

  // The benchmark's argument normalisation before validation: undefined values, non-finite numbers and
  // empty strings in optional fields are dropped (recursively through object properties and array items).
  const normalize = (schema, value) => {
    if (value === undefined) return undefined;
    if (!schema || typeof schema !== "object") return clone(value);
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (typeof value === "number" && !Number.isFinite(value) && (types.includes("number") || types.includes("integer"))) {
      return undefined;
    }
    if (Array.isArray(value)) return value.map((item) => normalize(schema.items || {}, item));
    if (schema.type !== "object" || !value || typeof value !== "object") return value;
    const properties = schema.properties || {};
    const required = new Set(Array.isArray(schema.required) ? schema.required : []);
    const kept = [];
    for (const [key, item] of Object.entries(value)) {
      if (item === undefined || (item === "" && !required.has(key))) continue;
      const normalized = normalize(properties[key] || {}, item);
      if (normalized !== undefined) kept.push([key, normalized]);
    }
    return Object.fromEntries(kept);
  };

  const post = async (path, body) => {
    const response = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    const payload = await response.json();
    if (!response.ok || payload.error) throw new Error(payload.error || `request to ${path} failed (${response.status})`);
    return payload;
  };

  window.__GENUI_TOOL_CALL__ = async (name, args) => {
    const args_ = normalize((await inputSchemas())[name], args) ?? {};
    try {
      const payload = await post("./__tools/call", { tool: name, arguments: args_, scenario: scenario() });
      toolLogs.push({ name, args: clone(args_), scenario: scenario(), result: clone(payload.result) });
      return clone(payload.result);
    } catch (error) {
      toolLogs.push({ name, args: clone(args_), scenario: scenario(), error: String(error) });
      throw error;
    }
  };

  window.__GENUI_RESOURCE_READ__ = async (uri) => {
    try {
      const payload = await post("./__resources/read", { uri, scenario: scenario() });
      resourceLogs.push({ uri, scenario: scenario(), result: clone(payload.result) });
      return clone(payload.result);
    } catch (error) {
      resourceLogs.push({ uri, scenario: scenario(), error: String(error) });
      throw error;
    }
  };

  Object.defineProperty(window, "__GENUI_GET_RUNTIME_LOGS__", {
    value: () => ({ tool_logs: clone(toolLogs), resource_logs: clone(resourceLogs) }),
    enumerable: false,
    configurable: false,
    writable: false,
  });
})();

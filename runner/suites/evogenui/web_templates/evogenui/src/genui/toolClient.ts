// Reserved tool client: the call goes to the runtime that public/__genui_runtime.js installs, which
// forwards it to the artifact server's tool bridge (arguments and results validated there).
type ToolRuntime = (toolName: string, toolArgs: unknown) => Promise<unknown>;

export async function callTool<T = any, TArgs = unknown>(name: string, args: TArgs): Promise<T> {
  const runtime = (window as Window & { __GENUI_TOOL_CALL__?: ToolRuntime }).__GENUI_TOOL_CALL__;
  if (!runtime) {
    throw new Error("Tool runtime is unavailable");
  }
  return (await runtime(name, args)) as T;
}

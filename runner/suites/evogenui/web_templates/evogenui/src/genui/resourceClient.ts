// Reserved resource client: reads a declared resource through the runtime of public/__genui_runtime.js.
type ResourceRuntime = (resourceUri: string) => Promise<unknown>;

export async function readResource<T = any>(uri: string): Promise<T> {
  const runtime = (window as Window & { __GENUI_RESOURCE_READ__?: ResourceRuntime }).__GENUI_RESOURCE_READ__;
  if (!runtime) {
    throw new Error("Resource runtime is unavailable");
  }
  return (await runtime(uri)) as T;
}

// Build-time guard: a generated app may only pull in files from its own workspace and the template's
// node_modules. The runner vets import specifiers before the build; this plugin checks what Vite actually
// resolved, loaded and bundled (relative imports, ?raw/?url imports, import.meta.glob, new URL(...),
// CSS url()), and fails the build on the first path outside those folders.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

function realOrSelf(file) {
  try {
    return fs.realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}

// The node_modules folder Vite itself was loaded from (the template's shared, read-only install).
function templateModules() {
  let dir = path.dirname(fileURLToPath(import.meta.resolve("vite")));
  while (path.basename(dir) !== "node_modules" && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return realOrSelf(dir);
}

function inside(file, folder) {
  const rel = path.relative(folder, file);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

export function workspaceGuard() {
  let root = "";
  let allowed = [];
  const check = (ctx, id, how) => {
    if (typeof id !== "string" || id.startsWith("\0") || !path.isAbsolute(id)) return; // virtual modules
    const file = realOrSelf(id.split("?")[0].split("#")[0]);
    if (!allowed.some((folder) => inside(file, folder))) {
      ctx.error(`[genui] ${how} ${JSON.stringify(id)} lies outside the workspace and the template's modules`);
    }
  };
  return {
    name: "genui-workspace-guard",
    enforce: "pre",
    configResolved(config) {
      root = realOrSelf(config.root);
      allowed = [root, templateModules()];
    },
    async resolveId(source, importer, options) {
      const resolved = await this.resolve(source, importer, { ...options, skipSelf: true });
      if (resolved && !resolved.external) check(this, resolved.id, "import resolved to");
      return resolved;
    },
    load(id) {
      check(this, id, "loading");
      return null;
    },
    generateBundle(_options, bundle) {
      for (const output of Object.values(bundle)) {
        for (const id of output.moduleIds || []) check(this, id, "bundled module");
        // Asset names are relative to the root (e.g. a stylesheet's url() target).
        for (const name of output.originalFileNames || []) check(this, path.resolve(root, name), "bundled asset");
      }
    },
  };
}

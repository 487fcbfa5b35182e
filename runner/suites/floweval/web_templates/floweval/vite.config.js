// JavaScript, not TypeScript: the sandbox loads the config with Node's native loader (node_modules is read-only).
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";
import tailwindcss from "tailwindcss";
import { workspaceGuard } from "./workspace-guard.js";

// FlowEval's harness (Appendix A): React JSX + TailwindCSS + FontAwesome. PostCSS is configured here, not in a
// postcss.config.js, so no config file is searched for; Tailwind reads its own config beside this one.
export default defineConfig({
  plugins: [workspaceGuard(), react()],
  css: { postcss: { plugins: [tailwindcss({ config: fileURLToPath(new URL("./tailwind.config.js", import.meta.url)) })] } },
  base: "./",
  logLevel: "info",
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false },
});

// JavaScript, not TypeScript: the sandbox loads the config with Node's native loader (node_modules is read-only).
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";
import { workspaceGuard } from "./workspace-guard.js";

// EvoGenUI-Bench's scaffold layout (React 18 + TypeScript + Vite); relative base so any path serves it.
export default defineConfig({
  plugins: [workspaceGuard(), react()],
  base: "./",
  logLevel: "info",
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false },
});

import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";
import { workspaceGuard } from "./workspace-guard.js";

// Relative base so the artifact can be served from any path; no sourcemaps keep dist small.
export default defineConfig({
  plugins: [workspaceGuard(), react()],
  base: "./",
  logLevel: "info",
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false },
});

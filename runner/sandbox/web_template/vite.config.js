import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// Relative base so the artifact can be served from any path; no sourcemaps keep dist small.
export default defineConfig({
  plugins: [react()],
  base: "./",
  logLevel: "info",
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false },
});

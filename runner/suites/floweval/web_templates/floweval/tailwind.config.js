// Tailwind scans the page and the generated sources for class names; only the ones used reach the CSS.
// `relative`: the globs are relative to this file, not to the build's working folder.
export default {
  content: { relative: true, files: ["./index.html", "./src/**/*.{js,jsx}"] },
  theme: { extend: {} },
  plugins: [],
};

// Reserved entry file: renders the model's src/App.tsx (its default export, else a named `App`).
import React from "react";
import ReactDOM from "react-dom/client";

import * as AppModule from "./App";
import "./styles.css";

const loaded = AppModule as { default?: React.ComponentType; App?: React.ComponentType };
const App = loaded.default ?? loaded.App ?? (() => null);

ReactDOM.createRoot(document.getElementById("root")!).render(
  <React.StrictMode>
    <App />
  </React.StrictMode>,
);

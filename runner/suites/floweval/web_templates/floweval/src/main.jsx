// Reserved entry file: Tailwind's base styles, then the model's src/App.jsx (its default export, else `App`).
import React from "react";
import ReactDOM from "react-dom/client";

import * as AppModule from "./App.jsx";
import "./index.css";

const App = AppModule.default ?? AppModule.App ?? (() => null);

ReactDOM.createRoot(document.getElementById("root")).render(
  <React.StrictMode>
    <App />
  </React.StrictMode>,
);

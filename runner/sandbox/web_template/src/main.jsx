// Reserved entry file: mounts the model's App component. Models write src/App.jsx (and more under src/).
import React from "react";
import { createRoot } from "react-dom/client";
import App from "./App.jsx";

createRoot(document.getElementById("root")).render(<App />);

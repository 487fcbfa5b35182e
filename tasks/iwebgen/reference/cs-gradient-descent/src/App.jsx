import { useMemo, useState } from "react";

// An ill-conditioned quadratic bowl: f(x, y) = 0.5 (x^2 + 12 y^2), minimum at the origin.
const CURV = [1, 12];
const loss = ([x, y]) => 0.5 * (CURV[0] * x * x + CURV[1] * y * y);
const grad = ([x, y]) => [CURV[0] * x, CURV[1] * y];
const STARTS = [[-4, 1.6], [3.5, -1.8], [-2, -2]];
const COLORS = { gd: "#1565c0", momentum: "#6a1b9a", adam: "#e65100" };
const NAMES = { gd: "Gradient descent", momentum: "Momentum", adam: "Adam" };

function run(kind, { lr, beta1, beta2 }, steps, start) {
  let p = [...start];
  let v = [0, 0], m = [0, 0], s = [0, 0];
  const path = [p];
  for (let t = 1; t <= steps; t += 1) {
    const g = grad(p);
    if (kind === "gd") p = p.map((x, i) => x - lr * g[i]);
    if (kind === "momentum") { v = v.map((vi, i) => 0.9 * vi + g[i]); p = p.map((x, i) => x - lr * v[i]); }
    if (kind === "adam") {
      m = m.map((mi, i) => beta1 * mi + (1 - beta1) * g[i]);
      s = s.map((si, i) => beta2 * si + (1 - beta2) * g[i] * g[i]);
      const mh = m.map((mi) => mi / (1 - beta1 ** t));
      const sh = s.map((si) => si / (1 - beta2 ** t));
      p = p.map((x, i) => x - (lr * mh[i]) / (Math.sqrt(sh[i]) + 1e-8));
    }
    p = p.map((x) => Math.max(-50, Math.min(50, x))); // keep diverging runs drawable
    path.push(p);
  }
  return path;
}

function Slider({ label, value, min, max, step, onChange, digits = 3 }) {
  return (
    <label className="control">
      <span>{label}: <b>{value.toFixed(digits)}</b></span>
      <input type="range" aria-label={label} min={min} max={max} step={step} value={value}
        onChange={(e) => onChange(Number(e.target.value))} />
    </label>
  );
}

export default function App() {
  const [lr, setLr] = useState(0.05);
  const [beta1, setBeta1] = useState(0.9);
  const [beta2, setBeta2] = useState(0.999);
  const [shown, setShown] = useState({ gd: true, momentum: true, adam: true });
  const [steps, setSteps] = useState(20);
  const [startIndex, setStartIndex] = useState(0);
  const start = STARTS[startIndex];

  const paths = useMemo(() => Object.fromEntries(Object.keys(NAMES).map((k) => [k, run(k, { lr, beta1, beta2 }, steps, start)])),
    [lr, beta1, beta2, steps, start]);

  const W = 520, H = 340, R = [-5, 5], RY = [-2.6, 2.6];
  const sx = (x) => ((x - R[0]) / (R[1] - R[0])) * W;
  const sy = (y) => H - ((y - RY[0]) / (RY[1] - RY[0])) * H;
  const levels = [0.25, 1, 2.5, 5, 9, 15, 24];
  const LW = 520, LH = 160;
  const maxLoss = Math.max(loss(start), 1e-9);
  const lx = (i) => 40 + (i / Math.max(steps, 1)) * (LW - 60);
  const ly = (f) => LH - 24 - (Math.min(f, maxLoss) / maxLoss) * (LH - 40);

  return (
    <div className="app">
      <style>{`
        .app { font-family: system-ui, sans-serif; display: flex; min-height: 100vh; background: #f4f6f8; color: #1d2733; }
        nav { width: 260px; background: #fff; border-right: 1px solid #dde3ea; padding: 18px; }
        main { padding: 18px; display: flex; flex-direction: column; gap: 14px; }
        .control { display: block; margin-bottom: 14px; font-size: 14px; }
        .control input[type=range] { width: 100%; }
        .check { display: block; font-size: 14px; margin: 6px 0; }
        button { margin: 8px 8px 0 0; padding: 6px 12px; }
        table { font-size: 13px; border-collapse: collapse; }
        td { padding: 2px 8px; }
      `}</style>
      <nav>
        <h1 style={{ fontSize: 18 }}>Optimizers on a loss surface</h1>
        <Slider label="Learning rate" value={lr} min={0.001} max={0.5} step={0.001} onChange={setLr} />
        <Slider label="Adam beta1" value={beta1} min={0} max={0.99} step={0.01} digits={2} onChange={setBeta1} />
        <Slider label="Adam beta2" value={beta2} min={0.9} max={0.9999} step={0.0001} digits={4} onChange={setBeta2} />
        {Object.keys(NAMES).map((k) => (
          <label className="check" key={k} style={{ color: COLORS[k] }}>
            <input type="checkbox" checked={shown[k]} aria-label={`Show ${NAMES[k]}`}
              onChange={() => setShown((s) => ({ ...s, [k]: !s[k] }))} /> {NAMES[k]}
          </label>
        ))}
        <button onClick={() => setSteps((n) => n + 10)}>Step x10</button>
        <button onClick={() => { setSteps(0); setStartIndex((i) => (i + 1) % STARTS.length); }}>Reset (new start)</button>
        <p style={{ fontSize: 13 }}>Iteration {steps}</p>
        <table><tbody>
          {Object.keys(NAMES).filter((k) => shown[k]).map((k) => (
            <tr key={k}><td style={{ color: COLORS[k] }}>{NAMES[k]}</td><td>loss {loss(paths[k][paths[k].length - 1]).toExponential(2)}</td></tr>
          ))}
        </tbody></table>
      </nav>
      <main>
        <svg width={W} height={H} role="img" aria-label="contour plot" style={{ background: "#fff" }}>
          {levels.map((c, i) => (
            <ellipse key={c} cx={sx(0)} cy={sy(0)} rx={(Math.sqrt((2 * c) / CURV[0]) / (R[1] - R[0])) * W}
              ry={(Math.sqrt((2 * c) / CURV[1]) / (RY[1] - RY[0])) * H} fill="none" stroke={`hsl(210, 60%, ${35 + i * 8}%)`} />
          ))}
          <circle cx={sx(0)} cy={sy(0)} r="3" fill="#000" />
          {Object.keys(NAMES).filter((k) => shown[k]).map((k) => (
            <polyline key={k} fill="none" stroke={COLORS[k]} strokeWidth="2"
              points={paths[k].map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(" ")} />
          ))}
          <text x={8} y={16} fontSize="12">y</text><text x={W - 20} y={H - 8} fontSize="12">x</text>
        </svg>
        <svg width={LW} height={LH} role="img" aria-label="loss curve" style={{ background: "#fff" }}>
          <line x1={40} y1={LH - 24} x2={LW - 20} y2={LH - 24} stroke="#888" />
          <line x1={40} y1={10} x2={40} y2={LH - 24} stroke="#888" />
          <text x={LW / 2} y={LH - 6} fontSize="12" textAnchor="middle">iteration</text>
          <text x={4} y={14} fontSize="12">loss</text>
          {Object.keys(NAMES).filter((k) => shown[k]).map((k) => (
            <polyline key={k} fill="none" stroke={COLORS[k]} strokeWidth="2"
              points={paths[k].map((p, i) => `${lx(i).toFixed(1)},${ly(loss(p)).toFixed(1)}`).join(" ")} />
          ))}
        </svg>
      </main>
    </div>
  );
}

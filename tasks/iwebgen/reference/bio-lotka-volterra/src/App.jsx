import { useEffect, useMemo, useState } from "react";

const DELTA = 0.02; // conversion efficiency, fixed by the specification
const T_MAX = 40;
const DT = 0.01;
const SAMPLE = 10; // keep every 10th integration step for drawing

function derivative([x, y], { alpha, beta, gamma }) {
  return [alpha * x - beta * x * y, DELTA * x * y - gamma * y];
}

// Classical fourth-order Runge-Kutta with a fixed step.
function simulate(params, prey0, predator0) {
  let state = [prey0, predator0];
  const points = [{ t: 0, x: state[0], y: state[1] }];
  const steps = Math.round(T_MAX / DT);
  for (let i = 1; i <= steps; i += 1) {
    const k1 = derivative(state, params);
    const k2 = derivative(state.map((v, j) => v + (DT / 2) * k1[j]), params);
    const k3 = derivative(state.map((v, j) => v + (DT / 2) * k2[j]), params);
    const k4 = derivative(state.map((v, j) => v + DT * k3[j]), params);
    state = state.map((v, j) => Math.max(0, v + (DT / 6) * (k1[j] + 2 * k2[j] + 2 * k3[j] + k4[j])));
    if (i % SAMPLE === 0) points.push({ t: i * DT, x: state[0], y: state[1] });
  }
  return points;
}

function Slider({ label, value, min, max, step, unit, onChange }) {
  return (
    <label className="control">
      <span>{label}: <b>{value.toFixed(2)}</b> {unit}</span>
      <input type="range" min={min} max={max} step={step} value={value} aria-label={label}
        onChange={(event) => onChange(Number(event.target.value))} />
    </label>
  );
}

function polyline(points, sx, sy) {
  return points.map((p) => `${sx(p).toFixed(1)},${sy(p).toFixed(1)}`).join(" ");
}

export default function App() {
  const [alpha, setAlpha] = useState(1.0);
  const [beta, setBeta] = useState(0.1);
  const [gamma, setGamma] = useState(1.5);
  const [prey0, setPrey0] = useState(40);
  const [predator0, setPredator0] = useState(9);
  const [running, setRunning] = useState(false);
  const [frame, setFrame] = useState(0);

  const points = useMemo(() => simulate({ alpha, beta, gamma }, prey0, predator0),
    [alpha, beta, gamma, prey0, predator0]);
  const current = points[Math.min(frame, points.length - 1)];
  const yMax = Math.max(...points.map((p) => Math.max(p.x, p.y))) * 1.05 || 1;
  const xMax = Math.max(...points.map((p) => p.x)) * 1.05 || 1;
  const pMax = Math.max(...points.map((p) => p.y)) * 1.05 || 1;

  useEffect(() => {
    if (!running) return undefined;
    const id = setInterval(() => {
      setFrame((f) => {
        if (f + 5 >= points.length - 1) { setRunning(false); return points.length - 1; }
        return f + 5;
      });
    }, 40);
    return () => clearInterval(id);
  }, [running, points.length]);

  const W = 460, H = 260, M = 36;
  const tx = (p) => M + (p.t / T_MAX) * (W - 2 * M);
  const ty = (v) => H - M - (v / yMax) * (H - 2 * M);
  const px = (p) => M + (p.x / xMax) * (W - 2 * M);
  const py = (p) => H - M - (p.y / pMax) * (H - 2 * M);
  const eqPrey = gamma / DELTA, eqPredator = alpha / beta;

  const reset = () => { setRunning(false); setFrame(0); };

  return (
    <div className="app">
      <style>{`
        .app { font-family: system-ui, sans-serif; display: flex; gap: 20px; padding: 20px; color: #222; background: #f7f7f5; min-height: 100vh; }
        .panel { width: 260px; background: #fff; border: 1px solid #ddd; border-radius: 8px; padding: 16px; }
        .control { display: block; margin-bottom: 14px; font-size: 14px; }
        .control input { width: 100%; }
        .charts { display: flex; flex-wrap: wrap; gap: 16px; }
        figure { margin: 0; background: #fff; border: 1px solid #ddd; border-radius: 8px; padding: 8px; }
        figcaption { font-size: 13px; color: #555; }
        button { margin-right: 8px; padding: 6px 14px; }
        .readout { font-size: 13px; margin-top: 10px; }
      `}</style>
      <aside className="panel">
        <h1 style={{ fontSize: 18 }}>Predator-prey dynamics</h1>
        <Slider label="Prey growth rate alpha" value={alpha} min={0.1} max={2} step={0.05} unit="1/time" onChange={(v) => { setAlpha(v); reset(); }} />
        <Slider label="Predation rate beta" value={beta} min={0.01} max={0.2} step={0.005} unit="" onChange={(v) => { setBeta(v); reset(); }} />
        <Slider label="Predator death rate gamma" value={gamma} min={0.1} max={2} step={0.05} unit="1/time" onChange={(v) => { setGamma(v); reset(); }} />
        <label className="control">Initial prey
          <input type="number" min={1} max={100} value={prey0} aria-label="Initial prey"
            onChange={(e) => { setPrey0(Math.min(100, Math.max(1, Number(e.target.value) || 1))); reset(); }} />
        </label>
        <label className="control">Initial predators
          <input type="number" min={1} max={100} value={predator0} aria-label="Initial predators"
            onChange={(e) => { setPredator0(Math.min(100, Math.max(1, Number(e.target.value) || 1))); reset(); }} />
        </label>
        <button onClick={() => setRunning((r) => !r)}>{running ? "Pause" : "Run"}</button>
        <button onClick={reset}>Reset</button>
        <div className="readout" data-testid="equilibrium">
          Equilibrium: prey {eqPrey.toFixed(1)}, predators {eqPredator.toFixed(1)}
        </div>
        <div className="readout" data-time={current.t.toFixed(2)}>
          t = {current.t.toFixed(1)}: prey {current.x.toFixed(1)}, predators {current.y.toFixed(1)}
        </div>
      </aside>
      <section className="charts">
        <figure>
          <figcaption>Populations over time (green: prey, red: predators)</figcaption>
          <svg width={W} height={H} role="img" aria-label="population time series">
            <line x1={M} y1={H - M} x2={W - M} y2={H - M} stroke="#999" />
            <line x1={M} y1={M} x2={M} y2={H - M} stroke="#999" />
            <text x={W / 2} y={H - 6} fontSize="12" textAnchor="middle">time</text>
            <text x={10} y={M - 10} fontSize="12">population</text>
            <polyline fill="none" stroke="#2e8b57" strokeWidth="2" points={polyline(points, tx, (p) => ty(p.x))} />
            <polyline fill="none" stroke="#c0392b" strokeWidth="2" points={polyline(points, tx, (p) => ty(p.y))} />
            <line x1={tx(current)} x2={tx(current)} y1={M} y2={H - M} stroke="#333" strokeDasharray="4 3" />
          </svg>
        </figure>
        <figure>
          <figcaption>Phase plane: predators against prey</figcaption>
          <svg width={W} height={H} role="img" aria-label="phase plane">
            <line x1={M} y1={H - M} x2={W - M} y2={H - M} stroke="#999" />
            <line x1={M} y1={M} x2={M} y2={H - M} stroke="#999" />
            <text x={W / 2} y={H - 6} fontSize="12" textAnchor="middle">prey</text>
            <text x={10} y={M - 10} fontSize="12">predators</text>
            <polyline fill="none" stroke="#555" strokeWidth="1.5" points={polyline(points, px, py)} />
            <circle cx={px({ x: eqPrey })} cy={py({ y: eqPredator })} r="4" fill="#888" />
            <circle cx={px(current)} cy={py(current)} r="5" fill="#c0392b" />
          </svg>
        </figure>
      </section>
    </div>
  );
}

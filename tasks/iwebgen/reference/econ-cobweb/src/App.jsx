import { useMemo, useState } from "react";

// Demand P = A - b Q, supply (decided on last period's price) P = C + d Q.
const A = 10, C = 1;

function cobweb(b, d, p0, periods) {
  const prices = [p0];
  const path = [];
  let p = p0;
  for (let t = 0; t < periods; t += 1) {
    const q = Math.max(0, (p - C) / d); // producers supply from last period's price
    const next = A - b * q; // the market clears on the demand curve
    path.push([q, p], [q, next]);
    p = Math.max(-20, Math.min(30, next));
    prices.push(p);
  }
  return { prices, path };
}

function Slider({ label, value, min, max, step, onChange }) {
  return (
    <label className="control">
      <span>{label}: <b>{value.toFixed(2)}</b></span>
      <input type="range" aria-label={label} min={min} max={max} step={step} value={value}
        onChange={(e) => onChange(Number(e.target.value))} />
    </label>
  );
}

export default function App() {
  const [b, setB] = useState(1.0);
  const [d, setD] = useState(1.5);
  const [p0, setP0] = useState(7);
  const [periods, setPeriods] = useState(12);
  const [showEq, setShowEq] = useState(true);

  const { prices, path } = useMemo(() => cobweb(b, d, p0, periods), [b, d, p0, periods]);
  const qStar = (A - C) / (b + d), pStar = A - b * qStar;
  const ratio = b / d;
  const status = Math.abs(ratio - 1) < 1e-9 ? "oscillating" : ratio < 1 ? "converging" : "diverging";

  const W = 380, H = 320, M = 40, QMAX = 10, PMAX = 12;
  const sx = (q) => M + (q / QMAX) * (W - 2 * M);
  const sy = (p) => H - M - (p / PMAX) * (H - 2 * M);
  const TW = 420;
  const tx = (t) => M + (t / Math.max(periods, 1)) * (TW - 2 * M);

  return (
    <div className="app">
      <style>{`
        .app { font-family: "Segoe UI", sans-serif; padding: 22px; background: #fdfcf9; color: #1e2a3a; min-height: 100vh; }
        .row { display: flex; gap: 18px; flex-wrap: wrap; }
        svg { background: #fff; border: 1px solid #e1ddd3; border-radius: 8px; }
        .controls { display: grid; grid-template-columns: repeat(3, 220px); gap: 12px 24px; margin-top: 16px; }
        .control { display: block; font-size: 14px; }
        .control input[type=range] { width: 100%; }
        .badge { display: inline-block; padding: 3px 10px; border-radius: 12px; color: #fff; font-size: 13px; }
        button { padding: 6px 12px; }
      `}</style>
      <h1 style={{ fontSize: 20 }}>The cobweb model <span className="badge" data-status={status}
        style={{ background: { converging: "#2e7d32", oscillating: "#f9a825", diverging: "#c62828" }[status] }}>{status}</span></h1>
      <div className="row">
        <svg width={W} height={H} role="img" aria-label="supply and demand diagram">
          <line x1={M} y1={H - M} x2={W - M} y2={H - M} stroke="#888" />
          <line x1={M} y1={M / 2} x2={M} y2={H - M} stroke="#888" />
          <text x={W / 2} y={H - 8} fontSize="12" textAnchor="middle">quantity</text>
          <text x={6} y={16} fontSize="12">price</text>
          <line x1={sx(0)} y1={sy(A)} x2={sx(QMAX)} y2={sy(A - b * QMAX)} stroke="#1a237e" strokeWidth="2" />
          <line x1={sx(0)} y1={sy(C)} x2={sx(QMAX)} y2={sy(C + d * QMAX)} stroke="#b71c1c" strokeWidth="2" />
          <polyline fill="none" stroke="#ff8f00" strokeWidth="1.5"
            points={path.map(([q, p]) => `${sx(q).toFixed(1)},${sy(p).toFixed(1)}`).join(" ")} />
          {showEq && <circle cx={sx(qStar)} cy={sy(pStar)} r="5" fill="#333" />}
        </svg>
        <svg width={TW} height={H} role="img" aria-label="price over time">
          <line x1={M} y1={H - M} x2={TW - M} y2={H - M} stroke="#888" />
          <line x1={M} y1={M / 2} x2={M} y2={H - M} stroke="#888" />
          <text x={TW / 2} y={H - 8} fontSize="12" textAnchor="middle">period</text>
          <text x={6} y={16} fontSize="12">price</text>
          {showEq && <line x1={M} x2={TW - M} y1={sy(pStar)} y2={sy(pStar)} stroke="#999" strokeDasharray="4 4" />}
          <polyline fill="none" stroke="#ff8f00" strokeWidth="2"
            points={prices.map((p, t) => `${tx(t).toFixed(1)},${sy(p).toFixed(1)}`).join(" ")} />
        </svg>
      </div>
      <div className="controls">
        <Slider label="Demand slope b" value={b} min={0.2} max={3} step={0.05} onChange={setB} />
        <Slider label="Supply slope d" value={d} min={0.2} max={3} step={0.05} onChange={setD} />
        <Slider label="Initial price p0" value={p0} min={1} max={9} step={0.1} onChange={setP0} />
        <label className="control">Periods
          <input type="number" aria-label="Periods" min={1} max={40} value={periods}
            onChange={(e) => setPeriods(Math.min(40, Math.max(1, Math.round(Number(e.target.value)) || 1)))} />
        </label>
        <div><button onClick={() => setPeriods((n) => Math.min(40, n + 1))}>Next period</button></div>
        <label className="control">
          <input type="checkbox" checked={showEq} aria-label="Show equilibrium" onChange={() => setShowEq((s) => !s)} /> Show equilibrium
          {showEq && <span> (P* = {pStar.toFixed(2)}, Q* = {qStar.toFixed(2)})</span>}
        </label>
      </div>
    </div>
  );
}

import { useState } from "react";
import { FontAwesomeIcon } from "@fortawesome/react-fontawesome";
import { faStar, faSuitcase } from "@fortawesome/free-solid-svg-icons";

import { STAYS } from "./data.js";

function SearchForm({ search, setSearch, onSubmit }) {
  const input = (key, label, type = "text") => (
    <label className="flex flex-col text-sm">{label}
      <input type={type} className="rounded border px-2 py-1" value={search[key]}
        onChange={(e) => setSearch({ ...search, [key]: e.target.value })} />
    </label>
  );
  return (
    <form className="flex flex-wrap items-end gap-3 bg-sky-50 p-6" onSubmit={(e) => { e.preventDefault(); onSubmit(); }}>
      {input("city", "Destination")}
      {input("checkIn", "Check-in date")}
      {input("checkOut", "Check-out date")}
      {input("guests", "Guests", "number")}
      <button type="submit" className="rounded bg-sky-700 px-4 py-2 text-white">Search stays</button>
    </form>
  );
}

function Results({ city, maxPrice, setMaxPrice, onOpen }) {
  const found = STAYS.filter((s) => s.city.toLowerCase() === city.trim().toLowerCase() && s.price <= maxPrice);
  return (
    <section className="p-6">
      <h1 className="mb-2 text-xl font-bold">Stays in {city}</h1>
      <label className="mb-4 flex flex-col text-sm">Maximum price per night
        <select className="w-40 rounded border px-2 py-1" value={maxPrice} onChange={(e) => setMaxPrice(Number(e.target.value))}>
          {[1000, 200, 100].map((p) => <option key={p} value={p}>{p === 1000 ? "Any price" : `Up to $${p}`}</option>)}
        </select>
      </label>
      {found.length === 0 && <p>No stays match. Try another destination or price.</p>}
      <ul className="grid grid-cols-2 gap-4">
        {found.map((s) => (
          <li key={s.id} className="rounded border p-4">
            <button className="text-lg font-semibold text-sky-800" onClick={() => onOpen(s.id)}>{s.name}</button>
            <p className="text-sm">${s.price} per night · <FontAwesomeIcon icon={faStar} /> {s.rating}</p>
          </li>
        ))}
      </ul>
    </section>
  );
}

function StayDetail({ stay, search, onBook, onBack }) {
  const [name, setName] = useState("");
  const [error, setError] = useState("");
  const book = (e) => {
    e.preventDefault();
    if (!name.trim()) { setError("Enter the name of the main guest."); return; }
    onBook({ stay, name, ...search });
  };
  return (
    <section className="p-6">
      <button className="text-sm text-sky-700" onClick={onBack}>Back to results</button>
      <h1 className="mt-2 text-2xl font-bold">{stay.name}</h1>
      <p>{stay.city} · ${stay.price} per night · {stay.perks.join(", ")}</p>
      <form className="mt-4 max-w-sm" onSubmit={book}>
        <label className="mb-2 flex flex-col text-sm">Main guest name
          <input className="rounded border px-2 py-1" value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        {error && <p role="alert" className="text-red-600">{error}</p>}
        <button type="submit" className="rounded bg-sky-700 px-4 py-2 text-white">Reserve</button>
      </form>
    </section>
  );
}

function Trips({ bookings, onCancel }) {
  return (
    <section className="p-6">
      <h1 className="mb-4 text-xl font-bold">My trips</h1>
      {bookings.length === 0 && <p>You have no upcoming trips.</p>}
      <ul className="divide-y">
        {bookings.map((b) => (
          <li key={b.ref} className="flex justify-between py-2">
            <span>{b.stay.name}, {b.checkIn} to {b.checkOut} ({b.ref})</span>
            <button className="text-red-600" onClick={() => onCancel(b.ref)}>Cancel {b.ref}</button>
          </li>
        ))}
      </ul>
    </section>
  );
}

const EXISTING = [{ ref: "HS-7731", stay: STAYS[0], name: "Sam Rivera", checkIn: "2027-06-12", checkOut: "2027-06-14", guests: "2" }];

export default function App() {
  const [view, setView] = useState({ name: "search" });
  const [search, setSearch] = useState({ city: "", checkIn: "", checkOut: "", guests: "2" });
  const [maxPrice, setMaxPrice] = useState(1000);
  const [bookings, setBookings] = useState(EXISTING);
  const [notice, setNotice] = useState("");
  const stay = view.name === "stay" ? STAYS.find((s) => s.id === view.id) : null;
  const book = (booking) => {
    const ref = `HS-${7800 + bookings.length}`;
    setBookings([...bookings, { ...booking, ref }]);
    setNotice(`Booking ${ref} confirmed for ${booking.name} at ${booking.stay.name}.`);
    setView({ name: "trips" });
  };
  return (
    <div className="min-h-screen">
      <header className="flex items-center justify-between bg-sky-900 px-6 py-3 text-white">
        <button className="font-bold" onClick={() => setView({ name: "search" })}>Harbor Stays</button>
        <button className="flex items-center gap-2" onClick={() => { setNotice(""); setView({ name: "trips" }); }}>
          <FontAwesomeIcon icon={faSuitcase} /> My trips
        </button>
      </header>
      {notice && <p role="status" className="bg-green-100 px-6 py-2">{notice}</p>}
      <SearchForm search={search} setSearch={setSearch} onSubmit={() => { setNotice(""); setView({ name: "results" }); }} />
      {view.name === "results" && (
        <Results city={search.city} maxPrice={maxPrice} setMaxPrice={setMaxPrice} onOpen={(id) => setView({ name: "stay", id })} />
      )}
      {stay && <StayDetail stay={stay} search={search} onBook={book} onBack={() => setView({ name: "results" })} />}
      {view.name === "trips" && (
        <Trips bookings={bookings} onCancel={(ref) => {
          setBookings(bookings.filter((b) => b.ref !== ref));
          setNotice(`Booking ${ref} cancelled.`);
        }} />
      )}
      {view.name === "search" && (
        <section className="p-6 text-slate-600">Find a place to stay: enter a destination such as Lisbon, Marrakesh or Bergen.</section>
      )}
    </div>
  );
}

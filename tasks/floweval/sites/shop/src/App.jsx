import { useState } from "react";
import { FontAwesomeIcon } from "@fortawesome/react-fontawesome";
import { faCartShopping } from "@fortawesome/free-solid-svg-icons";

import { PRODUCTS, SHIPPING } from "./data.js";

function Header({ count, onHome, onCart }) {
  return (
    <header className="flex items-center justify-between bg-emerald-700 px-6 py-4 text-white">
      <button className="text-xl font-bold" onClick={onHome}>Northwind Goods</button>
      <button className="flex items-center gap-2 rounded bg-emerald-900 px-3 py-1" onClick={onCart}>
        <FontAwesomeIcon icon={faCartShopping} /> Cart ({count})
      </button>
    </header>
  );
}

function Catalog({ query, setQuery, category, setCategory, onOpen }) {
  const shown = PRODUCTS.filter(
    (p) => p.name.toLowerCase().includes(query.toLowerCase()) && (category === "All" || p.category === category),
  );
  return (
    <section className="p-6">
      <div className="mb-4 flex gap-3">
        <label className="flex flex-1 flex-col text-sm">Search products
          <input className="rounded border px-2 py-1" value={query} onChange={(e) => setQuery(e.target.value)} />
        </label>
        <label className="flex flex-col text-sm">Category
          <select className="rounded border px-2 py-1" value={category} onChange={(e) => setCategory(e.target.value)}>
            {["All", "Kitchen", "Home", "Office"].map((c) => <option key={c}>{c}</option>)}
          </select>
        </label>
      </div>
      {shown.length === 0 && <p>No products match your search.</p>}
      <ul className="grid grid-cols-3 gap-4">
        {shown.map((p) => (
          <li key={p.id} className="rounded border p-4 shadow-sm">
            <button className="text-lg font-semibold text-emerald-800" onClick={() => onOpen(p.id)}>{p.name}</button>
            <p className="text-sm text-gray-600">{p.category} · ${p.price}</p>
          </li>
        ))}
      </ul>
    </section>
  );
}

function Product({ product, onAdd, onBack }) {
  return (
    <section className="p-6">
      <button className="text-sm text-emerald-700" onClick={onBack}>Back to products</button>
      <h1 className="mt-2 text-2xl font-bold">{product.name}</h1>
      <p className="my-2 text-gray-700">{product.blurb}</p>
      <p className="mb-4 text-xl">${product.price}</p>
      <button className="rounded bg-emerald-600 px-4 py-2 text-white" onClick={() => onAdd(product.id)}>Add to cart</button>
    </section>
  );
}

function Cart({ items, onRemove, onCheckout, onBack }) {
  const lines = Object.entries(items).map(([id, qty]) => ({ ...PRODUCTS.find((p) => p.id === id), qty }));
  const subtotal = lines.reduce((sum, l) => sum + l.price * l.qty, 0);
  return (
    <section className="p-6">
      <h1 className="mb-4 text-2xl font-bold">Your cart</h1>
      {lines.length === 0 ? (
        <p>Your cart is empty. <button className="text-emerald-700" onClick={onBack}>Continue shopping</button></p>
      ) : (
        <>
          <ul className="mb-4 divide-y">
            {lines.map((l) => (
              <li key={l.id} className="flex justify-between py-2">
                <span>{l.name} × {l.qty}</span>
                <span>${l.price * l.qty}</span>
                <button className="text-red-600" onClick={() => onRemove(l.id)}>Remove {l.name}</button>
              </li>
            ))}
          </ul>
          <p>Subtotal: ${subtotal}</p>
          <button className="mt-4 rounded bg-emerald-600 px-4 py-2 text-white" onClick={onCheckout}>Checkout</button>
        </>
      )}
    </section>
  );
}

function Checkout({ items, onPlace }) {
  const [form, setForm] = useState({ name: "", email: "", address: "" });
  const [error, setError] = useState("");
  const total = Object.entries(items).reduce((s, [id, q]) => s + PRODUCTS.find((p) => p.id === id).price * q, 0) + SHIPPING;
  const field = (key, label) => (
    <label className="mb-2 flex flex-col text-sm">{label}
      <input className="rounded border px-2 py-1" value={form[key]} onChange={(e) => setForm({ ...form, [key]: e.target.value })} />
    </label>
  );
  const submit = (e) => {
    e.preventDefault();
    if (!form.name || !form.email.includes("@") || !form.address) {
      setError("Please fill in your name, a valid email and your address.");
      return;
    }
    onPlace(form, total);
  };
  return (
    <form className="max-w-md p-6" onSubmit={submit}>
      <h1 className="mb-4 text-2xl font-bold">Checkout</h1>
      {field("name", "Full name")}
      {field("email", "Email")}
      {field("address", "Shipping address")}
      <p className="my-2">Total with shipping: ${total}</p>
      {error && <p role="alert" className="text-red-600">{error}</p>}
      <button type="submit" className="rounded bg-emerald-600 px-4 py-2 text-white">Place order</button>
    </form>
  );
}

export default function App() {
  const [view, setView] = useState({ name: "catalog" });
  const [items, setItems] = useState({});
  const [query, setQuery] = useState("");
  const [category, setCategory] = useState("All");
  const [order, setOrder] = useState(null);
  const count = Object.values(items).reduce((a, b) => a + b, 0);
  const add = (id) => setItems({ ...items, [id]: (items[id] ?? 0) + 1 });
  const remove = (id) => {
    const next = { ...items };
    delete next[id];
    setItems(next);
  };
  const place = (form, total) => {
    setOrder({ number: "NW-1042", name: form.name, total });
    setItems({});
    setView({ name: "confirmation" });
  };
  const product = view.name === "product" ? PRODUCTS.find((p) => p.id === view.id) : null;
  return (
    <div className="min-h-screen bg-gray-50">
      <Header count={count} onHome={() => setView({ name: "catalog" })} onCart={() => setView({ name: "cart" })} />
      <main>
        {view.name === "catalog" && (
          <Catalog query={query} setQuery={setQuery} category={category} setCategory={setCategory}
            onOpen={(id) => setView({ name: "product", id })} />
        )}
        {product && <Product product={product} onAdd={add} onBack={() => setView({ name: "catalog" })} />}
        {view.name === "cart" && (
          <Cart items={items} onRemove={remove} onCheckout={() => setView({ name: "checkout" })}
            onBack={() => setView({ name: "catalog" })} />
        )}
        {view.name === "checkout" && <Checkout items={items} onPlace={place} />}
        {view.name === "confirmation" && order && (
          <section className="p-6">
            <h1 className="text-2xl font-bold">Thank you, {order.name}!</h1>
            <p>Order {order.number} is confirmed. Total charged: ${order.total}.</p>
          </section>
        )}
      </main>
    </div>
  );
}

import { useState } from "react";
import { FontAwesomeIcon } from "@fortawesome/react-fontawesome";
import { faEnvelope, faPaperPlane } from "@fortawesome/free-solid-svg-icons";

import { ME, MESSAGES } from "./data.js";

const FOLDERS = ["Inbox", "Sent", "Archive"];

function Sidebar({ folder, counts, onFolder, onCompose }) {
  return (
    <nav className="w-48 border-r bg-slate-100 p-4">
      <button className="mb-4 flex w-full items-center gap-2 rounded bg-indigo-600 px-3 py-2 text-white" onClick={onCompose}>
        <FontAwesomeIcon icon={faPaperPlane} /> Compose
      </button>
      <ul>
        {FOLDERS.map((f) => (
          <li key={f}>
            <button className={`w-full px-2 py-1 text-left ${f === folder ? "font-bold" : ""}`} onClick={() => onFolder(f)}>
              {f} ({counts[f] ?? 0})
            </button>
          </li>
        ))}
      </ul>
    </nav>
  );
}

function MessageList({ messages, onOpen, query, setQuery }) {
  return (
    <section className="flex-1 p-4">
      <label className="mb-3 flex flex-col text-sm">Search mail
        <input className="rounded border px-2 py-1" value={query} onChange={(e) => setQuery(e.target.value)} />
      </label>
      {messages.length === 0 && <p>No messages here.</p>}
      <ul className="divide-y">
        {messages.map((m) => (
          <li key={m.id}>
            <button className="flex w-full justify-between py-2 text-left" onClick={() => onOpen(m.id)}>
              <span className="font-semibold">{m.from}</span>
              <span>{m.subject}</span>
              <span className="text-sm text-slate-500">{m.date}</span>
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

function Reader({ message, onReply, onArchive, onBack }) {
  return (
    <article className="flex-1 p-4">
      <button className="text-sm text-indigo-700" onClick={onBack}>Back to {message.folder}</button>
      <h1 className="mt-2 text-xl font-bold">{message.subject}</h1>
      <p className="text-sm text-slate-600">From {message.from} · {message.date}</p>
      <p className="my-4">{message.body}</p>
      <div className="flex gap-2">
        <button className="rounded bg-indigo-600 px-3 py-1 text-white" onClick={onReply}>Reply</button>
        {message.folder !== "Archive" && <button className="rounded border px-3 py-1" onClick={onArchive}>Archive</button>}
      </div>
    </article>
  );
}

function Composer({ draft, onSend, onDiscard }) {
  const [form, setForm] = useState(draft);
  const [error, setError] = useState("");
  const input = (key, label) => (
    <label className="mb-2 flex flex-col text-sm">{label}
      <input className="rounded border px-2 py-1" value={form[key]} onChange={(e) => setForm({ ...form, [key]: e.target.value })} />
    </label>
  );
  const send = (e) => {
    e.preventDefault();
    if (!form.to.includes("@")) {
      setError("Enter a recipient address.");
      return;
    }
    onSend(form);
  };
  return (
    <form className="flex-1 p-4" onSubmit={send}>
      <h1 className="mb-3 text-xl font-bold">New message</h1>
      {input("to", "To")}
      {input("subject", "Subject")}
      <label className="mb-2 flex flex-col text-sm">Message
        <textarea className="h-32 rounded border px-2 py-1" value={form.body} onChange={(e) => setForm({ ...form, body: e.target.value })} />
      </label>
      {error && <p role="alert" className="text-red-600">{error}</p>}
      <div className="flex gap-2">
        <button type="submit" className="rounded bg-indigo-600 px-3 py-1 text-white">Send</button>
        <button type="button" className="rounded border px-3 py-1" onClick={onDiscard}>Discard</button>
      </div>
    </form>
  );
}

export default function App() {
  const [messages, setMessages] = useState(MESSAGES);
  const [folder, setFolder] = useState("Inbox");
  const [openId, setOpenId] = useState(null);
  const [draft, setDraft] = useState(null);
  const [query, setQuery] = useState("");
  const [notice, setNotice] = useState("");
  const counts = Object.fromEntries(FOLDERS.map((f) => [f, messages.filter((m) => m.folder === f).length]));
  const shown = messages.filter(
    (m) => m.folder === folder && (m.subject + " " + m.from + " " + m.body).toLowerCase().includes(query.toLowerCase()),
  );
  const open = messages.find((m) => m.id === openId);
  const goFolder = (f) => { setFolder(f); setOpenId(null); setDraft(null); setNotice(""); };
  const send = (form) => {
    const id = Math.max(...messages.map((m) => m.id)) + 1;
    setMessages([...messages, { id, folder: "Sent", from: "Sam Rivera", subject: form.subject || "(no subject)",
      date: "Now", body: form.body, to: form.to }]);
    setDraft(null);
    setFolder("Sent");
    setNotice(`Message sent to ${form.to}.`);
  };
  const archive = () => {
    setMessages(messages.map((m) => (m.id === openId ? { ...m, folder: "Archive" } : m)));
    setOpenId(null);
    setNotice("Conversation archived.");
  };
  return (
    <div className="flex min-h-screen flex-col">
      <header className="flex items-center gap-2 bg-indigo-800 px-6 py-3 text-white">
        <FontAwesomeIcon icon={faEnvelope} /> <span className="font-bold">Quill Mail</span>
        <span className="ml-auto text-sm">{ME}</span>
      </header>
      {notice && <p role="status" className="bg-green-100 px-6 py-2">{notice}</p>}
      <div className="flex flex-1">
        <Sidebar folder={folder} counts={counts} onFolder={goFolder}
          onCompose={() => { setOpenId(null); setNotice(""); setDraft({ to: "", subject: "", body: "" }); }} />
        {draft ? (
          <Composer draft={draft} onSend={send} onDiscard={() => setDraft(null)} />
        ) : open ? (
          <Reader message={open} onBack={() => setOpenId(null)} onArchive={archive}
            onReply={() => { setDraft({ to: `${open.from.split(" ")[0].toLowerCase()}@quill.example`,
              subject: `Re: ${open.subject}`, body: "" }); setOpenId(null); }} />
        ) : (
          <MessageList messages={shown} onOpen={(id) => { setOpenId(id); setNotice(""); }} query={query} setQuery={setQuery} />
        )}
      </div>
    </div>
  );
}

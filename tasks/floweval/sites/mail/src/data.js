// Static mailbox of the reference mail client.
export const ME = "sam@quill.example";

export const MESSAGES = [
  { id: 1, folder: "Inbox", from: "Priya Natarajan", subject: "Quarterly report draft", date: "Mon 09:12",
    body: "Hi Sam, the draft of the quarterly report is ready for your review. Could you send comments by Thursday?" },
  { id: 2, folder: "Inbox", from: "Harbor Stays", subject: "Your booking is confirmed", date: "Sun 18:40",
    body: "Your stay at the Seaside Loft from 12 to 14 June is confirmed. Booking reference HS-7731." },
  { id: 3, folder: "Inbox", from: "Leo Martins", subject: "Lunch on Friday?", date: "Sat 11:05",
    body: "Are you free for lunch on Friday? The new ramen place near the office opened." },
  { id: 4, folder: "Sent", from: "Sam Rivera", subject: "Re: Team offsite", date: "Fri 16:22",
    body: "Count me in for the offsite. I can bring the projector." },
];

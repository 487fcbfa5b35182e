// Static inventory of the reference booking site.
export const STAYS = [
  { id: "loft", name: "Seaside Loft", city: "Lisbon", price: 120, rating: 4.7, perks: ["Sea view", "Kitchen"] },
  { id: "riad", name: "Garden Riad", city: "Marrakesh", price: 85, rating: 4.8, perks: ["Courtyard pool", "Breakfast"] },
  { id: "cabin", name: "Pine Cabin", city: "Bergen", price: 140, rating: 4.5, perks: ["Sauna", "Fireplace"] },
  { id: "studio", name: "Old Town Studio", city: "Lisbon", price: 70, rating: 4.3, perks: ["Central", "Wi-Fi"] },
  { id: "villa", name: "Cliff Villa", city: "Lisbon", price: 260, rating: 4.9, perks: ["Private pool", "Parking"] },
];

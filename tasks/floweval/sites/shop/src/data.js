// Static catalogue of the reference shop (no network: every flow runs offline).
export const PRODUCTS = [
  { id: "mug", name: "Ceramic Mug", price: 14, category: "Kitchen", blurb: "Stoneware mug, 350 ml, dishwasher safe." },
  { id: "lamp", name: "Oak Desk Lamp", price: 59, category: "Home", blurb: "Dimmable LED lamp with a solid oak base." },
  { id: "kettle", name: "Copper Kettle", price: 42, category: "Kitchen", blurb: "1.2 l stovetop kettle with a whistle." },
  { id: "throw", name: "Wool Throw", price: 75, category: "Home", blurb: "Merino throw blanket, 130 x 170 cm." },
  { id: "notebook", name: "Linen Notebook", price: 12, category: "Office", blurb: "A5 dotted notebook, 192 pages." },
  { id: "pen", name: "Brass Pen", price: 28, category: "Office", blurb: "Refillable ballpoint in solid brass." },
];

export const SHIPPING = 5;

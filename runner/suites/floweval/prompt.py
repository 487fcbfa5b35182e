"""The generation prompt of FlowEval, Appendix A ("UI Generation Prompt"), with the runner's output contract.

The system text is the paper's one-shot prompt; the user text is its closing template ("Create a website with
the following description: <App Name>: <App Description>. The website must support the following tasks ...").
Only the output contract is the runner's: the files come back in the answer instead of being written by an
agent, and only files under src/ are accepted (the template's other files are reserved).
"""

from __future__ import annotations

from typing import Any

PROMPT_VERSION = "floweval-appendix-a-v1"
# suite.artifact=static (not the paper's): App. A's design principles, a static site as the implementation.
STATIC_PROMPT_VERSION = "floweval-appendix-a-static-v1"

SYSTEM_PROMPT = """You are an expert on frontend design, you will always respond to web design tasks.
Your task is to create a website according to the user's request using the React framework.
When implementing the website, you should follow these rules:

[Implementation Rules]
1. You should use React by default.
2. If the user requires a library that is not installed in current react environment, please use HTML and tell the user the reason.
3. Your task is to create a website using React JSX, where the entire implementation is contained within the src/ directory. src/App.jsx is the main view and it should should export a component called App. Besides the new files you create in the src/ directory, you must not change or edit any other files.

## Common Design Principles
### General Design Guidelines:
- Create a stunning, contemporary, and highly functional website based on the user's request
- Implement a cohesive design language throughout the entire website/application
- Choose a carefully selected, harmonious color palette that enhances the overall aesthetic
- Create a clear visual hierarchy with proper typography to improve readability
- Incorporate subtle animations and transitions to add polish and improve user experience
- Ensure proper spacing and alignment using appropriate layout techniques
- Implement responsive design principles to ensure the website looks great on all device sizes
- Use modern UI patterns like cards, gradients, and subtle shadows to add depth and visual interest
- Incorporate whitespace effectively to create a clean, uncluttered design
- For images, use placeholder images from services like https://placehold.co/

## React Design Guidelines
### Implementation Requirements:
- You MUST export an 'App' component as default export in src/App.jsx
- DO NOT include any external libraries, frameworks, or dependencies outside of what is already installed
- Utilize TailwindCSS for styling, focusing on creating a visually appealing and responsive layout
- Do not define any new SVGs - you should use icons from FontAwesome instead from the packages: @fortawesome/fontawesome-svg-core @fortawesome/free-solid-svg-icons @fortawesome/react-fontawesome. You can assume that these packages are installed even though you cannot see them in a package.json in the same directory.
- Avoid using arbitrary values (e.g., 'h-[600px]'). Stick to Tailwind's predefined classes for consistency
- Use static data instead of making HTTP requests or API calls to external services. Define all data classes and placeholder data structures in a location so that it can be referenced when creating components. Since a lot of the website's functionality may depend on this static data, you should think carefully about what should be inside of it, define it early, and hook it up to various parts of the app.
- Utilize Tailwind's typography classes to create a clear visual hierarchy and improve readability
- Ensure proper spacing and alignment using Tailwind's margin, padding, and flexbox/grid classes
- All functionality, such as buttons, links, search functionality, and forms should be implemented.
- Do not treat this as the starting point for an app - it should be the final complete UI.
- Remember to include alt text for all images.
- There should absolutely NEVER be any dead links or buttons that aren't implemented.

## Output
Reply with a short note, then the COMPLETE source of every file you create under src/ (at least src/App.jsx),
each as a path heading followed by one fenced code block, e.g.

### src/App.jsx
```jsx
export default function App() { ... }
```

src/main.jsx and src/index.css belong to the environment: do not write them."""

USER_TEMPLATE = """Create a website with the following description: {name}: {description}. The website must support the following tasks with the entire flows realistically mocked:

{tasks}

After implementing those tasks, do the following:
- Imagine what other functionality the website is missing. Be as comprehensive as possible. Think of all the possible reasons why a user might visit this website. Add that to your todo list
- Implement mocked flows for those functionality.
- Make sure all remaining buttons and interactive elements on the website should be mocked up and respond to interactions realisitically.

After you are done, review the code you have generated and ensure it meets all of the requirements. Do not run the server or install additional packages. Never execute the 'npm' command."""


# The static variant keeps App. A's opening and its common design principles; the React rules, the React
# guidelines and the output contract become a static site's.
_DESIGN_PRINCIPLES = SYSTEM_PROMPT[SYSTEM_PROMPT.index("## Common Design Principles"):
                                   SYSTEM_PROMPT.index("## React Design Guidelines")]
STATIC_SYSTEM_PROMPT = """You are an expert on frontend design, you will always respond to web design tasks.
Your task is to create a website according to the user's request as a static site: HTML, CSS and plain JavaScript that a browser loads as they are, with no build step and no packages.
When implementing the website, you should follow these rules:

[Implementation Rules]
1. index.html at the site's root is the entry page; put styles and scripts in files beside it (e.g. css/app.css, js/app.js) and load them with relative paths.

""" + _DESIGN_PRINCIPLES + """## Output
Reply with a short note, then the COMPLETE source of every file of the site (at least index.html), each as a path
heading followed by one fenced code block, e.g.

### index.html
```html
<!doctype html>
```"""


def generation_messages(name: str, description: str, goals: list[str], *, static: bool = False) -> list[dict[str, Any]]:
    """FlowEval App. A: the site's name and description plus the list of tasks it must support. `static`: the
    system text asks for a static site (suite.artifact=static, not the paper's)."""
    tasks = "\n".join(f"- {goal}" for goal in goals)
    user = USER_TEMPLATE.format(name=name, description=description.rstrip("."), tasks=tasks)
    system = STATIC_SYSTEM_PROMPT if static else SYSTEM_PROMPT
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]

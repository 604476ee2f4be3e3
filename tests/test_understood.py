"""What the chat says it understood: on the template path too (a chat that opens on a shelf name with a browsing
cue stays there), the constraints it took, negations as such, started again by an override."""
from __future__ import annotations


def test_what_the_template_path_understood_is_shown_too(proxy_agent) -> None:
    """A chat that opens on a shelf name with a browsing cue stays on the template path; its "understood" line
    still lists what it took, negations as such, and an override ("ignore my earlier preference") starts it
    again."""
    agent = proxy_agent
    chat = ["just browsing clogs for now", "black ones", "not leather", "under 50"]
    agent.reset("shelf-chat", {})
    for turn, line in enumerate(chat, 1):
        agent.respond("shelf-chat", line, turn, 10)
    last = agent.sessions["shelf-chat"].traces[-1]
    assert last.state is not None and last.state.path == "template"
    assert last.understood == ("black", "not leather", "under $50")
    protocol = ["I'm looking for Accessories Belts. Buckle closure", "For that, what matters is: leather.",
                "Actually, ignore my earlier preference. What I need is: cotton."]
    agent.reset("protocol", {})
    seen = []
    for turn, line in enumerate(protocol, 1):
        agent.respond("protocol", line, turn, 10)
        seen.append(agent.sessions["protocol"].traces[-1].understood)
    assert seen[0] == ("Buckle closure",) and seen[1] == ("Buckle closure", "leather") and seen[2] == ("cotton",)
    agent.close_session("shelf-chat")
    agent.close_session("protocol")

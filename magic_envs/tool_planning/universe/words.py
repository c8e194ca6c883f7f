"""Realistic word pools: people, messages, files, the home, food and media. Tagged "iid"/"ood" where a
request may quote them, so OOD requests meet unseen values."""

from __future__ import annotations

FIRST_NAMES = {
    "iid": ("Alice", "Brian", "Carol", "David", "Emily", "Frank", "Grace", "Henry", "Irene", "James", "Karen",
            "Laura", "Michael", "Nancy", "Oliver", "Paula", "Rachel", "Samuel", "Teresa", "Victor", "Wendy"),
    "ood": ("Aiko", "Amara", "Arjun", "Chidi", "Dmitri", "Esra", "Farid", "Haruto", "Ines", "Kofi", "Lakshmi",
            "Mateus", "Nadia", "Priya", "Santiago", "Thabo", "Wei", "Yusuf", "Zainab"),
}
LAST_NAMES = {
    "iid": ("Anderson", "Baker", "Carter", "Dawson", "Evans", "Fisher", "Garcia", "Hughes", "Jensen", "Keller",
            "Lopez", "Miller", "Nolan", "Parker", "Reed", "Schmidt", "Turner", "Walsh"),
    "ood": ("Adeyemi", "Banerjee", "Chen", "Dlamini", "Haddad", "Ito", "Kovacs", "Mensah", "Nakamura", "Okafor",
            "Petrov", "Rahman", "Silva", "Tanaka", "Yilmaz"),
}
MAIL_DOMAINS = ("example.com", "mail.example.org", "acme-corp.com", "northwind.io")
COMPANIES = ("Acme Corp", "Northwind Traders", "Globex", "Initech", "Umbrella Health", "Stark Logistics")

SUBJECTS = {"iid": ("Quarterly report", "Team lunch on Friday", "Project kickoff", "Invoice for March",
                    "Budget review", "Holiday schedule", "Design feedback", "Contract renewal"),
            "ood": ("Conference travel plans", "Server migration", "Hiring update", "Customer escalation",
                    "Board meeting notes", "Product launch checklist")}
BODIES = {"iid": ("Please find the latest numbers attached.", "Can we move our meeting to next week?",
                  "Thanks for your help with the presentation.", "I will be running 10 minutes late.",
                  "Could you review the draft by Thursday?", "Lunch is on me today."),
          "ood": ("The deployment finished without errors.", "Please confirm the venue booking.",
                  "Remember to submit your expenses.", "The client approved the proposal.")}
CHANNELS = ("#general", "#engineering", "#marketing", "#random", "#support", "#design")
EVENT_TITLES = {"iid": ("Team standup", "Dentist appointment", "Lunch with Sarah", "Project review",
                        "Yoga class", "Budget meeting", "Client call", "Code review"),
                "ood": ("Board meeting", "Parent-teacher conference", "Car service", "Book club",
                        "Guitar lesson", "Vendor negotiation")}
REMINDERS = {"iid": ("Pay the electricity bill", "Call mom", "Pick up dry cleaning", "Water the plants",
                     "Renew passport", "Submit timesheet"),
             "ood": ("Book flu shot", "Cancel gym trial", "Order printer ink", "Send birthday card")}

# The virtual file system: directory -> files (the listing is the same in every world).
FILES = {
    "/home/user/Documents": ("report_2025.pdf", "budget.xlsx", "notes.txt", "resume.docx", "contract.pdf",
                             "meeting_minutes.docx", "todo.txt"),
    "/home/user/Downloads": ("installer.dmg", "invoice_0425.pdf", "dataset.csv", "slides.pptx", "photo.zip"),
    "/home/user/Pictures": ("beach.jpg", "family.png", "screenshot.png", "passport_scan.jpg", "sunset.jpg"),
    "/home/user/Music": ("playlist.m3u", "podcast_ep12.mp3", "song_demo.wav"),
    "/home/user/Projects/website": ("index.html", "style.css", "app.js", "README.md", "config.json"),
    "/home/user/Projects/analysis": ("main.py", "requirements.txt", "results.csv", "plot.png", "README.md"),
}
FILE_QUERIES = ("report", "budget", "invoice", "readme", "notes", "photo", "config", "results")
FILE_TEXT = ("Meeting notes: agreed to ship version 2 in May.", "TODO: update the budget spreadsheet.",
             "Draft introduction for the quarterly report.", "Remember to back up the photos folder.")

# The smart home: device id, name, type, room (fixed inventory; states vary by world).
DEVICES = (("DEV-01", "Living Room Lights", "light", "living_room"), ("DEV-02", "Kitchen Lights", "light", "kitchen"),
           ("DEV-03", "Bedroom Lamp", "light", "bedroom"), ("DEV-04", "Hallway Thermostat", "thermostat", "hallway"),
           ("DEV-05", "Front Door Lock", "lock", "hallway"), ("DEV-06", "Back Door Lock", "lock", "kitchen"),
           ("DEV-07", "Living Room TV", "tv", "living_room"), ("DEV-08", "Kitchen Speaker", "speaker", "kitchen"),
           ("DEV-09", "Robot Vacuum", "vacuum", "living_room"), ("DEV-10", "Garage Door", "garage_door", "garage"),
           ("DEV-11", "Bedroom Fan", "fan", "bedroom"), ("DEV-12", "Office Air Purifier", "air_purifier", "office"),
           ("DEV-13", "Office Lights", "light", "office"), ("DEV-14", "Dishwasher", "appliance", "kitchen"))
ROOMS = ("living_room", "kitchen", "bedroom", "hallway", "garage", "office")

CUISINES = ("italian", "japanese", "mexican", "indian", "french", "thai", "chinese", "mediterranean", "american")
RESTAURANT_WORDS = ("Golden", "Little", "Blue", "Olive", "Green", "Royal", "Corner", "Harbor", "Silver", "Red")
RESTAURANT_NOUNS = ("Bistro", "Kitchen", "Table", "Garden", "House", "Grill", "Tavern", "Cantina", "Spoon")
INGREDIENTS = {"iid": ("chicken", "rice", "tomato", "pasta", "garlic", "onion", "cheese", "potato", "beef", "egg"),
               "ood": ("tofu", "lentils", "chickpeas", "salmon", "quinoa", "spinach", "mushroom", "coconut milk")}
DISHES = ("Curry", "Stir Fry", "Soup", "Salad", "Bake", "Risotto", "Tacos", "Stew", "Skillet", "Bowl")
FOODS = {"apple": (52, 0.3, 14, 0.2), "banana": (89, 1.1, 23, 0.3), "white rice": (130, 2.7, 28, 0.3),
         "chicken breast": (165, 31, 0, 3.6), "egg": (155, 13, 1.1, 11), "salmon": (208, 20, 0, 13),
         "broccoli": (34, 2.8, 7, 0.4), "almonds": (579, 21, 22, 50), "oats": (389, 17, 66, 7),
         "avocado": (160, 2, 9, 15), "cheddar cheese": (403, 25, 1.3, 33), "lentils": (116, 9, 20, 0.4)}
# per 100 g: calories, protein g, carbohydrates g, fat g

MUSIC_GENRES = ("pop", "rock", "jazz", "classical", "hip_hop", "electronic", "country", "folk")
ARTISTS = ("The Midnight Owls", "Luna Vega", "Northern Static", "Marco Bell", "The Paper Kites Club",
           "Aria Stone", "Velvet Harbor", "DJ Corvo", "Silent Meadow", "Jonah Reyes")
SONG_WORDS = ("Summer", "Echoes", "Golden", "River", "Night", "Paper", "Fire", "Ocean", "Dreams", "Neon",
              "Shadows", "Home", "Lights", "Horizon")
MOVIE_GENRES = ("action", "comedy", "drama", "horror", "sci_fi", "romance", "animation", "documentary")
MOVIE_WORDS = ("Last", "Silent", "Broken", "Hidden", "Crimson", "Lost", "Eternal", "Wild", "Frozen", "Secret")
MOVIE_NOUNS = ("Kingdom", "Signal", "Harbor", "Frontier", "Garden", "Protocol", "Empire", "Voyage", "Code")
NEWS_TOPICS = ("technology", "business", "sports", "science", "health", "politics", "entertainment")

SPECIALTIES = ("cardiology", "dermatology", "pediatrics", "orthopedics", "general_practice", "neurology",
               "ophthalmology")
MEDICATIONS = {"ibuprofen": ("200-400 mg every 4-6 hours", ("stomach upset", "heartburn", "dizziness")),
               "paracetamol": ("500-1000 mg every 4-6 hours", ("nausea", "rash")),
               "amoxicillin": ("500 mg every 8 hours", ("diarrhea", "nausea", "rash")),
               "loratadine": ("10 mg once daily", ("headache", "drowsiness", "dry mouth")),
               "omeprazole": ("20 mg once daily", ("headache", "abdominal pain")),
               "metformin": ("500 mg twice daily", ("nausea", "diarrhea", "metallic taste"))}
ACTIVITIES = ("running", "cycling", "swimming", "walking", "yoga", "strength_training", "rowing")

"""Write the project's bilingual pretraining corpus to
``bertlib/assets/small_corpus/{en,zh}.txt`` (package data).

Every sentence comes from templates written for this project (no outside text), so the corpus
may be redistributed under the project's licence. A paragraph is a short story about one
everyday topic: one person, told in a fixed order of steps, so that the order of sentences
carries the signal next-sentence prediction learns and the surrounding words give masked-token
prediction something to use.

Beside the stories stand *class paragraphs* (``scripts/word_classes.py``): short sentences about
one word of six word classes, such as "Nobody forgot the peel of mangoes.", which let masked-token
prediction learn which words belong together. Notebook 10's designed experiment needs them: some
of those words occur nowhere but here. Output: one sentence per line, a blank line between
paragraphs, stories and class paragraphs shuffled together.

    python scripts/make_corpus.py    # the shipped files: seed 0, 400 stories, 1600 class paragraphs
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

from word_classes import class_paragraph

OUT_DIR = Path(__file__).resolve().parent.parent / "bertlib" / "assets" / "small_corpus"

# ---------------------------------------------------------------- English
EN_PEOPLE = [  # name, subject, object, possessive pronoun
    ("Anna", "she", "her", "her"), ("Tom", "he", "him", "his"), ("Maria", "she", "her", "her"),
    ("David", "he", "him", "his"), ("Lucy", "she", "her", "her"), ("Peter", "he", "him", "his"),
    ("Emma", "she", "her", "her"), ("James", "he", "him", "his"), ("Sara", "she", "her", "her"),
    ("Ben", "he", "him", "his"), ("Grace", "she", "her", "her"), ("Sam", "he", "him", "his"),
]
EN_FILL = {
    "day": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"],
    "fruit": ["apples", "oranges", "bananas", "pears", "grapes", "peaches"],
    "veg": ["carrots", "potatoes", "tomatoes", "onions", "beans", "cabbages"],
    "dish": ["a vegetable soup", "fried rice", "a chicken stew", "noodles with eggs",
             "a fish curry", "a bean salad"],
    "book": ["a book about birds", "a history of the sea", "a novel about an old farm",
             "a guide to the stars", "a book of short poems", "a story about a lost cat"],
    "city": ["the capital", "a town by the sea", "the old city", "a village in the hills"],
    "sport": ["football", "basketball", "tennis", "volleyball"],
    "animal": ["dog", "cat", "rabbit", "parrot"],
    "flower": ["roses", "tulips", "sunflowers", "lilies"],
    "gift": ["a blue scarf", "a small lamp", "a box of pencils", "a wooden toy", "a photo album"],
    "subject": ["maths", "history", "music", "science", "geography"],
    "time": ["seven", "eight", "nine", "ten"],
}
EN_TOPICS = [
    [  # the market
        ["On {day} morning, {Name} went to the market.",
         "Early on {day}, {Name} walked to the market near {his} house."],
        ["{He} wanted to buy fresh food for the week.",
         "The fridge at home was almost empty."],
        ["First, {he} bought some {fruit} from an old farmer.",
         "At the first stall, {he} chose some ripe {fruit}."],
        ["Then {he} found cheap {veg} at the next stall.",
         "After that, {he} picked up a bag of {veg}."],
        ["The bags were heavy, so {he} took a bus home.",
         "{He} carried the heavy bags home slowly."],
        ["That evening, {he} cooked {dish} with the {veg}.",
         "For dinner, {he} made {dish} and ate the {fruit} after it."],
    ],
    [  # a rainy day
        ["When {Name} woke up on {day}, it was raining hard.",
         "It rained all day on {day}, and {Name} stayed at home."],
        ["{He} could not go to the park as {he} had planned.",
         "The plan to walk in the park had to wait."],
        ["Instead, {he} made a cup of hot tea.",
         "So {he} made some tea and sat by the window."],
        ["Then {he} read {book} for a few hours.",
         "{He} spent the afternoon reading {book}."],
        ["In the evening, the rain finally stopped.",
         "By the evening, the sky was clear again."],
        ["{He} went outside and saw a rainbow over the roofs.",
         "{He} took a short walk and enjoyed the fresh air."],
    ],
    [  # the library
        ["{Name} needed to write a report about {subject}.",
         "{Name} had a long report on {subject} to finish."],
        ["So {he} went to the library after school.",
         "On {day}, {he} went to the city library to study."],
        ["The librarian helped {him} find the right shelf.",
         "A kind librarian showed {him} where the books on {subject} were."],
        ["{He} borrowed three books and sat at a quiet table.",
         "{He} took a few books to a table near the window."],
        ["For two hours, {he} read and wrote notes.",
         "{He} read carefully and filled many pages with notes."],
        ["When the library closed, {his} report was almost done.",
         "By the time the library closed, {he} had finished the first draft."],
    ],
    [  # a train trip
        ["{Name} decided to visit {his} grandmother in {city}.",
         "Last {day}, {Name} took a train to {city} to see {his} grandmother."],
        ["{He} bought a ticket at the station early in the morning.",
         "{He} got to the station early and bought a ticket."],
        ["The train left at {time} o'clock and was full of people.",
         "The train was crowded, but {he} found a seat by the window."],
        ["During the trip, {he} watched the fields and rivers pass by.",
         "Outside the window, green fields and small farms went past."],
        ["{His} grandmother was waiting for {him} at the station.",
         "When the train arrived, {his} grandmother waved from the platform."],
        ["They walked to her house together and had lunch.",
         "They had a long lunch and talked about the family."],
    ],
    [  # the dog in the park
        ["{Name} has a young {animal} called Lucky.",
         "{Name} takes {his} {animal}, Lucky, to the park every day."],
        ["On {day} afternoon, they went to the park together.",
         "This {day}, the weather was warm, so they went to the park."],
        ["Lucky ran across the grass and chased the birds.",
         "As soon as they arrived, Lucky ran off to play on the grass."],
        ["{Name} threw a ball, and Lucky brought it back.",
         "{He} threw a ball again and again for Lucky."],
        ["After an hour, both of them were tired.",
         "After a while, Lucky lay down in the shade."],
        ["They walked home slowly as the sun went down.",
         "On the way home, {he} bought Lucky a small treat."],
    ],
    [  # a birthday party
        ["It was {Name}'s birthday on {day}.",
         "{Name} turned twenty on {day}."],
        ["{His} friends planned a small party for {him}.",
         "{His} friends secretly prepared a party at {his} flat."],
        ["They decorated the room with balloons and {flower}.",
         "They filled the room with balloons and put {flower} on the table."],
        ["When {Name} came home, everyone shouted happy birthday.",
         "When {he} opened the door, {his} friends jumped out and sang."],
        ["{He} opened the presents and found {gift}.",
         "One friend gave {him} {gift}, and {he} loved it."],
        ["They ate cake and danced until late at night.",
         "The party went on until midnight, and everyone was happy."],
    ],
    [  # the garden
        ["In spring, {Name} started a small garden behind {his} house.",
         "{Name} wanted to grow {his} own food, so {he} made a garden."],
        ["First, {he} dug the soil and removed the stones.",
         "{He} spent a whole {day} digging the soil."],
        ["Then {he} planted {veg} in neat rows.",
         "{He} planted {veg} and a few {flower} along the fence."],
        ["Every morning, {he} watered the plants before work.",
         "{He} watered the garden every evening after work."],
        ["After a few weeks, the first green leaves appeared.",
         "Soon small green shoots came up out of the ground."],
        ["In summer, {he} shared the {veg} with {his} neighbours.",
         "By summer, there were so many {veg} that {he} gave some away."],
    ],
    [  # a visit to the doctor
        ["{Name} woke up with a sore throat and a headache.",
         "On {day}, {Name} felt sick and had a high fever."],
        ["{He} called the clinic and made an appointment.",
         "{He} phoned the doctor and asked for an appointment that morning."],
        ["The doctor listened to {his} chest and looked at {his} throat.",
         "At the clinic, the doctor checked {his} temperature and throat."],
        ["She said it was only a bad cold.",
         "The doctor told {him} that it was a common cold."],
        ["She told {him} to rest and drink plenty of water.",
         "{He} was told to stay in bed for a few days."],
        ["Three days later, {Name} felt much better.",
         "After a few days of rest, {he} was well again."],
    ],
    [  # the match
        ["{Name} plays {sport} for the school team.",
         "{Name} has loved {sport} since {he} was a child."],
        ["On {day}, the team had an important match.",
         "This {day}, {his} team played against a strong team from {city}."],
        ["The other team scored first, and the crowd went quiet.",
         "In the first half, {his} team fell behind."],
        ["In the second half, {Name} scored twice.",
         "Then {Name} made a great play and scored."],
        ["When the final whistle blew, {his} team had won.",
         "In the end, {his} team won by a single point."],
        ["The players celebrated together in the rain.",
         "That night, the whole team went out for dinner."],
    ],
    [  # cooking for guests
        ["{Name} invited some friends to dinner on {day}.",
         "{Name} wanted to cook a special dinner for {his} friends."],
        ["In the morning, {he} wrote a list of what to buy.",
         "{He} looked for a recipe for {dish} in an old cookbook."],
        ["{He} bought {veg}, rice and some spices.",
         "At the shop, {he} bought everything on the list."],
        ["In the afternoon, {he} cut the {veg} and cooked slowly.",
         "{He} spent the whole afternoon in the kitchen."],
        ["The guests arrived at {time} o'clock and the food was ready.",
         "When the guests came, the table was already set."],
        ["Everyone said that {dish} was delicious.",
         "The friends ate everything and asked for the recipe."],
    ],
    [  # a school lesson
        ["On {day}, {Name} had a {subject} lesson after lunch.",
         "{Name}'s favourite lesson is {subject}."],
        ["The teacher began by asking the class a question.",
         "At the start of the lesson, the teacher wrote a problem on the board."],
        ["{Name} raised {his} hand and gave an answer.",
         "{Name} thought for a moment and then answered."],
        ["The teacher smiled and said it was correct.",
         "The answer was right, and the teacher praised {him}."],
        ["Then the class worked in small groups.",
         "For the rest of the lesson, the students worked in pairs."],
        ["At the end, the teacher gave them homework for {day}.",
         "Before the bell rang, the teacher gave out some homework."],
    ],
    [  # moving house
        ["{Name} found a new flat closer to {his} work.",
         "After five years, {Name} decided to move to a new flat."],
        ["For a week, {he} packed {his} things into boxes.",
         "{He} spent many evenings putting everything into boxes."],
        ["On {day}, {his} friends came to help with the move.",
         "On moving day, two friends came with a van."],
        ["They carried the heavy boxes down the stairs.",
         "Together they lifted the sofa and the boxes into the van."],
        ["The new flat was bright and had a small balcony.",
         "The new flat was small but full of light."],
        ["That night, {he} slept well in {his} new home.",
         "{He} put {flower} on the balcony to make it feel like home."],
    ],
]

# ---------------------------------------------------------------- Chinese
ZH_PEOPLE = [  # name, pronoun
    ("小明", "他"), ("小红", "她"), ("李华", "他"), ("王芳", "她"), ("张伟", "他"),
    ("陈静", "她"), ("刘洋", "他"), ("赵丽", "她"), ("杨帆", "他"), ("周敏", "她"),
]
ZH_FILL = {
    "day": ["星期一", "星期二", "星期三", "星期四", "星期五", "星期六", "星期天"],
    "fruit": ["苹果", "橘子", "香蕉", "梨", "葡萄", "桃子"],
    "veg": ["白菜", "土豆", "西红柿", "黄瓜", "萝卜", "豆角"],
    "dish": ["西红柿炒鸡蛋", "红烧鱼", "饺子", "蔬菜汤", "炒面", "土豆丝"],
    "book": ["一本关于鸟的书", "一本历史小说", "一本旅行日记", "一本诗集", "一本科学杂志"],
    "city": ["北京", "上海", "杭州", "西安", "成都", "广州"],
    "sport": ["足球", "篮球", "乒乓球", "排球"],
    "animal": ["小狗", "小猫", "兔子"],
    "flower": ["月季", "菊花", "荷花", "兰花"],
    "gift": ["一条围巾", "一盏台灯", "一盒彩笔", "一本相册", "一个杯子"],
    "subject": ["数学", "语文", "历史", "音乐", "地理"],
    "time": ["七", "八", "九", "十"],
}
ZH_TOPICS = [
    [  # 买菜
        ["{day}早上，{Name}去菜市场买菜。", "{day}一大早，{Name}就出门去了菜市场。"],
        ["家里的冰箱已经空了。", "{He}想买一些新鲜的菜和水果。"],
        ["{He}先在一个老农那里买了一些{fruit}。", "在第一个摊位，{he}挑了几斤{fruit}。"],
        ["接着{he}又买了便宜的{veg}。", "然后{he}在旁边的摊位买了{veg}。"],
        ["袋子很重，{he}只好坐公交车回家。", "{He}提着沉甸甸的袋子慢慢走回家。"],
        ["晚上，{he}用{veg}做了一道菜。", "晚饭的时候，{he}做了{dish}，饭后还吃了{fruit}。"],
    ],
    [  # 下雨天
        ["{day}早上{Name}醒来的时候，外面正下着大雨。",
         "{day}下了一整天的雨，{Name}只好待在家里。"],
        ["原来去公园散步的计划只能取消了。", "{He}本来打算去公园，现在去不成了。"],
        ["于是{he}泡了一杯热茶。", "{He}给自己泡了一壶茶，坐在窗边。"],
        ["下午{he}一直在读{book}。", "{He}花了一个下午读{book}。"],
        ["到了傍晚，雨终于停了。", "傍晚的时候，天空又放晴了。"],
        ["{He}走出家门，看见天上挂着一道彩虹。", "{He}出去走了一小会儿，空气特别清新。"],
    ],
    [  # 图书馆
        ["{Name}要写一篇关于{subject}的报告。", "老师让{Name}写一篇{subject}报告。"],
        ["放学以后，{he}去了图书馆。", "{day}下午，{he}到市图书馆去查资料。"],
        ["图书管理员帮{he}找到了合适的书架。", "一位热心的管理员告诉{he}{subject}的书放在哪里。"],
        ["{He}借了三本书，找了一张安静的桌子坐下。", "{He}拿着几本书坐到了窗边的桌子旁。"],
        ["{He}认真地看了两个小时，记了很多笔记。", "{He}一边看书一边做笔记，写满了好几页。"],
        ["图书馆关门的时候，{his}报告差不多写完了。", "到图书馆关门时，{he}已经写完了初稿。"],
    ],
    [  # 坐火车
        ["{Name}决定去{city}看望奶奶。", "上个{day}，{Name}坐火车去{city}看奶奶。"],
        ["{He}一大早就到火车站买了票。", "{He}很早就到了车站，买好了车票。"],
        ["火车{time}点出发，车上的人很多。", "车厢里很挤，不过{he}还是找到了一个靠窗的座位。"],
        ["一路上，{he}看着窗外的田野和河流。", "窗外，绿色的田野和小村庄一个接一个地闪过。"],
        ["奶奶早就在车站等{he}了。", "火车到站的时候，奶奶正在站台上向{he}招手。"],
        ["祖孙俩一起走回家，吃了一顿丰盛的午饭。", "吃午饭的时候，大家聊起了家里的事情。"],
    ],
    [  # 遛狗
        ["{Name}家里养了一只{animal}，名字叫豆豆。", "{Name}每天都带{his}{animal}豆豆去公园。"],
        ["{day}下午，他们一起去了公园。", "这个{day}天气很暖和，他们又去了公园。"],
        ["豆豆在草地上跑来跑去，追着小鸟玩。", "一到公园，豆豆就跑到草地上玩了起来。"],
        ["{Name}扔出一个球，豆豆很快就把球叼了回来。", "{He}一次又一次地把球扔给豆豆。"],
        ["玩了一个小时以后，他们都累了。", "过了一会儿，豆豆躺在树荫下休息。"],
        ["太阳下山的时候，他们慢慢地走回家。", "回家的路上，{he}给豆豆买了一点零食。"],
    ],
    [  # 生日
        ["{day}是{Name}的生日。", "{Name}在{day}过二十岁生日。"],
        ["朋友们为{he}准备了一个小小的聚会。", "{His}朋友们偷偷地在{his}家里准备了一个聚会。"],
        ["他们用气球和{flower}把房间布置得很漂亮。",
         "他们在房间里挂满了气球，还在桌上摆了{flower}。"],
        ["{Name}一进门，大家就一起喊生日快乐。", "{He}刚打开门，朋友们就跳出来唱起了生日歌。"],
        ["{He}打开礼物，发现是{gift}。", "一个朋友送给{he}{gift}，{he}非常喜欢。"],
        ["大家吃着蛋糕，一直玩到深夜。", "聚会一直持续到半夜，每个人都很开心。"],
    ],
    [  # 种菜
        ["春天，{Name}在房子后面开了一块小菜园。", "{Name}想自己种菜，于是开了一个小菜园。"],
        ["{He}先把土翻了一遍，又捡走了石头。", "{He}花了整整一个{day}来翻土。"],
        ["然后{he}整整齐齐地种下了{veg}。", "{He}种了一些{veg}，还在篱笆边种了几棵{flower}。"],
        ["每天早上上班前，{he}都要给菜浇水。", "每天下班以后，{he}都去菜园浇水。"],
        ["几个星期以后，地里长出了嫩绿的叶子。", "没过多久，小小的绿芽就从土里冒了出来。"],
        ["到了夏天，{he}把{veg}分给了邻居们。",
         "夏天的时候，{veg}多得吃不完，{he}就送了一些给别人。"],
    ],
    [  # 看病
        ["{Name}早上起来觉得嗓子疼，头也疼。", "{day}那天，{Name}发起了高烧。"],
        ["{He}给诊所打电话，预约了医生。", "{He}打电话给医生，约了当天上午看病。"],
        ["医生听了听{his}胸口，又看了看{his}嗓子。", "在诊所里，医生给{he}量了体温，检查了嗓子。"],
        ["医生说只是重感冒。", "医生告诉{he}，这只是普通的感冒。"],
        ["医生让{he}多休息，多喝水。", "医生让{he}在床上休息几天。"],
        ["三天以后，{Name}觉得好多了。", "休息了几天以后，{he}的病就好了。"],
    ],
    [  # 比赛
        ["{Name}是学校{sport}队的队员。", "{Name}从小就喜欢打{sport}。"],
        ["{day}，球队有一场重要的比赛。", "这个{day}，{his}球队要和{city}来的一支强队比赛。"],
        ["对方先得了分，观众们一下子安静了。", "上半场，{his}球队一直落后。"],
        ["下半场，{Name}连续得了两分。", "后来{Name}抓住机会，为球队得了分。"],
        ["比赛结束的时候，{his}球队赢了。", "最后，{his}球队以一分的优势赢得了比赛。"],
        ["队员们在雨中一起庆祝胜利。", "那天晚上，全队一起出去吃饭庆祝。"],
    ],
    [  # 请客
        ["{Name}请了几个朋友{day}来家里吃饭。", "{Name}想给朋友们做一顿特别的晚饭。"],
        ["早上，{he}列了一张购物清单。", "{He}在一本旧菜谱里找到了{dish}的做法。"],
        ["{He}买了{veg}、米和一些调料。", "在超市里，{he}把清单上的东西都买齐了。"],
        ["下午，{he}把{veg}切好，慢慢地做菜。", "{He}在厨房里忙了一整个下午。"],
        ["客人们{time}点到了，饭菜也正好做好。", "客人来的时候，桌子已经摆好了。"],
        ["大家都说{dish}特别好吃。", "朋友们把菜吃得干干净净，还问{he}是怎么做的。"],
    ],
    [  # 上课
        ["{day}午饭后，{Name}有一节{subject}课。", "{Name}最喜欢的课是{subject}课。"],
        ["上课一开始，老师就向全班提了一个问题。", "老师先在黑板上写了一道题。"],
        ["{Name}举起手回答了问题。", "{Name}想了一会儿，然后说出了答案。"],
        ["老师笑着说答对了。", "答案是对的，老师表扬了{he}。"],
        ["接下来，同学们分成小组讨论。", "剩下的时间里，同学们两个人一组做练习。"],
        ["下课前，老师布置了作业。", "下课铃响之前，老师给大家留了作业。"],
    ],
    [  # 搬家
        ["{Name}在离公司更近的地方找到了一套新房子。", "住了五年以后，{Name}决定搬到新家去。"],
        ["整整一个星期，{he}都在把东西装进箱子。", "{He}花了好几个晚上收拾东西，装了很多箱子。"],
        ["{day}，朋友们来帮{he}搬家。", "搬家那天，两个朋友开着一辆货车来帮忙。"],
        ["他们把沉重的箱子搬下了楼。", "大家一起把沙发和箱子抬上了车。"],
        ["新房子很明亮，还有一个小阳台。", "新家虽然不大，但是阳光很好。"],
        ["那天晚上，{he}在新家睡得很香。",
         "{He}在阳台上摆了几盆{flower}，新家一下子有了家的感觉。"],
    ],
]


def _cap(word: str) -> str:
    return word[:1].upper() + word[1:]


def _fill_en(rng: random.Random) -> dict[str, str]:
    name, he, him, his = rng.choice(EN_PEOPLE)
    slots = {key: rng.choice(values) for key, values in EN_FILL.items()}
    slots.update(Name=name, he=he, He=_cap(he), him=him, his=his, His=_cap(his))
    return slots


def _fill_zh(rng: random.Random) -> dict[str, str]:
    name, he = rng.choice(ZH_PEOPLE)
    slots = {key: rng.choice(values) for key, values in ZH_FILL.items()}
    # Chinese has no case and no separate object form; "his" is 他的/她的.
    slots.update(Name=name, he=he, He=he, him=he, his=he + "的", His=he + "的")
    return slots


def make_paragraph(topics: list, fill, rng: random.Random) -> list[str]:
    """One story: every step of a random topic in order, one random wording per step, with one
    middle step sometimes left out so that paragraphs differ in length."""
    steps = rng.choice(topics)
    skip = rng.randrange(1, len(steps) - 1) if rng.random() < 0.3 else None
    slots = fill(rng)
    return [rng.choice(step).format(**slots) for i, step in enumerate(steps) if i != skip]


def write_corpus(out_dir: Path, stories: int, class_paragraphs: int, seed: int) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for lang, topics, fill in (("en", EN_TOPICS, _fill_en), ("zh", ZH_TOPICS, _fill_zh)):
        rng = random.Random(f"{seed}-{lang}")
        paragraphs, seen = [], set()
        while len(paragraphs) < stories:
            # No paragraph twice, so that a held-out paragraph never also appears in training.
            paragraph = make_paragraph(topics, fill, rng)
            if tuple(paragraph) not in seen:
                seen.add(tuple(paragraph))
                paragraphs.append(paragraph)
        rng = random.Random(f"{seed}-{lang}-classes")
        paragraphs += [class_paragraph(lang, rng) for _ in range(class_paragraphs)]
        rng.shuffle(paragraphs)
        text = "\n\n".join("\n".join(p) for p in paragraphs) + "\n"
        (out_dir / f"{lang}.txt").write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    parser.add_argument("--stories", type=int, default=400, help="per language")
    parser.add_argument("--class-paragraphs", type=int, default=1600, help="per language")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    write_corpus(args.out, args.stories, args.class_paragraphs, args.seed)


if __name__ == "__main__":
    main()
